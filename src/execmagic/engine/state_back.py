"""A session run's state read back: the cwd and environment it left applied to its session, the line
that failed named.  The run's bash writes both into its state file as it ends (see :mod:`.session`);
a run that was stopped, or whose file something else wrote into, changes nothing and says why.
"""

from __future__ import annotations

import dataclasses

from ..guard.policy import Policy
from ..process.results import Result
from .failure_line import failed_line
from .plans import Plan
from .session import ShellSession, take_state_file, why_no_state

__all__ = ["STATE_LIMIT", "session_after", "stopped"]

#: Bytes of a state file read back at most: an environment is far smaller (Linux caps what exec passes at a
#: few MB), and what a run can write into its own state file must not cost the kernel its memory.
STATE_LIMIT = 16 << 20


def stopped(result: Result) -> bool:
    """Stopped before it ended by itself (a timeout, an interrupt, a signal): its state says nothing."""
    return result.timed_out or result.interrupted or result.signal is not None


def session_after(plan: Plan, result: Result, state_path: str, session: ShellSession, policy: Policy) -> Result:
    """Apply what a session run changed, read from ``state_path`` (the plan's, or its standby's), to
    ``session`` (the plan's: a sandboxed run's own); a ``cd`` out of ``policy``'s allowed folders is undone."""
    state = take_state_file(state_path, STATE_LIMIT)
    halted = stopped(result)
    if result.error:  # it never ran
        return result
    if state is not None and len(state) > STATE_LIMIT:  # no environment bash can export is this large
        why = "the shell's state was too large to be a session (something wrote into it)"
        return dataclasses.replace(result, notes=result.notes + (f"session state unchanged: {why}",))
    failure, sep, rest = (state or b"").partition(b"\0")  # the prelude writes the failed line first
    state, failure = (rest, failure) if sep else (state, b"")
    line = failed_line(failure, plan.shell_text or "", result.exit_code) if not halted and result.exit_code \
        else None
    if line is not None:
        result = dataclasses.replace(result, failed_line=line)
    if halted or not state:
        why = "the run was stopped" if halted else why_no_state(plan.shell_text or "")
        return dataclasses.replace(result, notes=result.notes + (f"session state unchanged: {why}",))
    try:
        delta = session.delta(state, plan.session_env or plan.command.env, plan.command.cwd)
    except ValueError:  # something of the script's own wrote into the state file as the shell ended
        why = "the shell's state could not be read (something the script left running wrote into it)"
        return dataclasses.replace(result, notes=result.notes + (f"session state unchanged: {why}",))
    note = None
    if delta.cwd is not None and policy.outside_roots(delta.cwd):
        note = f"cd to {delta.cwd} was undone: it is outside the allowed directories"
        delta = dataclasses.replace(delta, cwd=None)
    session.apply(delta)
    if note is not None:
        return dataclasses.replace(result, notes=result.notes + (note,))
    if delta.cwd is not None:
        return dataclasses.replace(result, new_cwd=delta.cwd)
    return result
