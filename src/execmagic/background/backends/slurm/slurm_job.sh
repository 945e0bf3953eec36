#!/bin/bash
# execmagic's SLURM job wrapper (submitted by execmagic.background.backends.slurm with sbatch).
#
#   slurm_job.sh FILES TIMEOUT GRACE MARKER -- COMMAND [ARG]...
#
# Why a wrapper: SLURM signals a job's process group (proctrack/pgid) or its cgroup; a command that
# calls setsid escapes the first.  So the command runs in a session of its own, carrying the
# environment marker execmagic gives every process it starts, and this script stops the session, the
# group and every marked process itself -- on a signal from scancel, at the timeout, and after the
# command's leader ended (as a cgroup would).  Its last act is to leave the exit code next to the
# logs, FILES.exit, as one line "CODE HOW [SIGNAL]" (HOW: exit, killed, timeout), so the kernel knows
# how the job ended even after SLURM forgot it (no accounting needed).
#
# FILES: where the job's files are, a path without its suffix, %j standing for the job id (as in
# sbatch's --output); it names the cluster, the job and the run's marker, so a job never reads a file
# written for another one.  Empty: no files (a foreground run, whose exit code srun passes on).
# TIMEOUT 0: none.  GRACE: seconds between the first signal and SIGKILL; the kernel may write another
# one to FILES.grace just before it signals (a %kill --grace of its own).
# The command's stdout and stderr go to FILES.stdout and FILES.stderr, opened here, so that nothing
# but the command's own output is in them: what SLURM writes about the job (the "CANCELLED" line of a
# scancel, this script's own errors) goes to sbatch's --output, FILES.slurm.  With FILES empty (srun)
# the command writes to this script's stdout and stderr, which srun streams.
# A script that must stand on no argv (a secret's value: every user reads an argv, in ps on the node and
# in SLURM's record of the job) comes in the environment instead, in pieces EXECMAGIC_SCRIPT_0, _1, ...
# (see script_env.py), and COMMAND's last word reads it from descriptor 3, as it would read its own.

files=$1 timeout=$2 grace=$3 marker=$4
shift 5  # FILES TIMEOUT GRACE MARKER --
job=${SLURM_JOB_ID:?slurm_job.sh runs as a SLURM job}
files=${files//'%j'/$job}
# The marker comes as an argument, not in our environment: only the command's processes may carry it,
# or the sweep would find this script's own subshells (a fork shares its parent's /proc/PID/environ).
# (Under srun the job inherits the marker of the local srun process: our helpers must not carry it.)
unset EXECMAGIC_RUN
# The script's pieces leave the environment before anything starts: the command's processes never see them.
script="" handed="" n=0
while v=EXECMAGIC_SCRIPT_$n && [ -n "${!v+x}" ]; do
  script+=${!v}
  unset "$v"
  handed=1 n=$((n + 1))
done

stop_with=""   # the signal that asked us to stop
how="exit"

# The command's processes: its session and group (the same id), and every process carrying the
# marker (a setsid or double-forked child), never this script.  Zombies have ended already.
members() {
  {
    ps -e -o pid=,sid=,pgid=,stat= 2>/dev/null | awk -v s="$sid" '($2 == s || $3 == s) && $4 !~ /^Z/ {print $1}'
    grep -lzxF "EXECMAGIC_RUN=$marker" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
  } | grep -vx "$$" | sort -u
}

signal_all() {  # $1: signal name
  kill -"$1" -- "-$sid" 2>/dev/null
  local pids
  pids=$(members)
  # shellcheck disable=SC2086  # one pid per word
  [ -n "$pids" ] && kill -"$1" $pids 2>/dev/null
}

# Send $1 to everything, allow the grace, then SIGKILL what is left (a few rounds, for late forks).
stop_tree() {
  local g tenths i=0
  g=$grace
  [ -n "$files" ] && [ -s "$files.grace" ] && g=$(head -c 32 "$files.grace")
  tenths=$(awk -v g="$g" 'BEGIN { t = int(g * 10); print (t > 0 ? t : 0) }')
  signal_all "$1"
  while [ "$i" -lt "$tenths" ] && [ -n "$(members)" ]; do
    sleep 0.1
    i=$((i + 1))
  done
  for _ in 1 2 3; do
    [ -z "$(members)" ] && break
    escalated=1
    signal_all KILL
    sleep 0.1
  done
}

# The reaper: a process in a session of its own that holds a pipe from this script and stops the
# command's tree when it reads EOF without a "done" line -- when this script was killed (SIGKILL from
# "scancel --signal=KILL", from srun's forced termination, or proctrack killing the job's group).
# A cgroup takes the reaper along with everything else; proctrack/pgid does not, so it does its job.
reap() {
  read -r _ && exit 0
  stop_tree TERM
}

start_reaper() {
  local code
  code="$(declare -p sid marker grace files); $(declare -f members signal_all stop_tree reap); reap"
  exec {reaper}> >(exec setsid bash -c "$code" >/dev/null 2>&1)
}

on_signal() {  # remember why we stop; the main loop does the stopping (traps interrupt `wait`)
  [ -z "$stop_with" ] && stop_with=$1
}
for s in TERM INT HUP QUIT USR1 USR2; do
  # shellcheck disable=SC2064  # the signal name is fixed when the trap is set
  trap "on_signal $s; how=killed" "$s"
done
trap 'on_signal TERM; how=timeout' ALRM

# (a here-string: a pipe, or for a big script a 0600 file of bash's in $TMPDIR, deleted once open)
[ -n "$handed" ] && exec 3<<<"$script"
if [ -n "$files" ]; then
  EXECMAGIC_RUN=$marker setsid "$@" </dev/null >"$files.stdout" 2>"$files.stderr" &
else
  EXECMAGIC_RUN=$marker setsid "$@" </dev/null &
fi
pid=$!
[ -n "$handed" ] && exec 3<&-  # the command holds it now; nothing started later gets it
script=""
sid=$pid  # a background child of a non-interactive shell is no group leader: setsid made it its own session
reaper=""
start_reaper  # after the command, which must not hold the reaper's pipe open

timer=""
if [ "$timeout" != "0" ]; then
  (trap - ALRM TERM; exec {reaper}>&-; sleep "$timeout" && kill -ALRM $$) &
  timer=$!
fi

escalated=""
code=""
while :; do
  wait "$pid"
  rc=$?
  if [ -n "$stop_with" ]; then
    stop_tree "$stop_with"
    wait "$pid" 2>/dev/null
    break
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    code=$rc
    break
  fi
done
[ -n "$timer" ] && kill "$timer" 2>/dev/null
[ -z "$stop_with" ] && [ -n "$(members)" ] && { grace=0.5; stop_tree TERM; }  # what the command left running

case $how in
  timeout) line="124 timeout" code=124 ;;
  killed) num=$(kill -l "$stop_with"); code=$((128 + num)); line="$code killed $stop_with${escalated:+ KILL}" ;;
  *) line="$code exit" ;;
esac
[ -n "$files" ] && printf '%s\n' "$line" > "$files.exit.tmp" && mv -f "$files.exit.tmp" "$files.exit"
echo done >&"$reaper"
exit "$code"
