"""One toy job: its files copied into pipes by the shared poller; its end, learned once, its words and a
look that failed are the shared handle's."""

from __future__ import annotations

import contextlib
import os
import signal

from execmagic.background.backends.filepump import FileStream
from execmagic.background.backends.poller import Poller
from execmagic.background.backends.remote import RemoteHandle
from execmagic.background.backends.status import JobStatus, Phase
from execmagic.process.stop import remaining, stop_tree

#: One thread for every toy job of this process.
POLLER = Poller("execmagic-toy", 0.05)


class ToyHandle(RemoteHandle):
    enforces_timeout = False  # the reader stops it at its deadline, as a local shell

    def __init__(self, proc, marker, paths):
        super().__init__({name: FileStream(path) for name, path in paths.items()}, POLLER, JobStatus(Phase.RUNNING))
        self.proc = proc
        self.pid = proc.pid
        self.job_id = f"toy{proc.pid}"
        self.marker = marker
        self.guard = (proc.pid, marker)  # it runs here: the watchdog stops it if the owner dies

    def remove_files(self):
        for pipe in self._pipes.values():
            with contextlib.suppress(OSError):
                os.unlink(pipe.path)

    def pump(self, now):
        code = self.proc.poll()  # before the copy: what it wrote before it ended is in its files now
        done = all([stream.copy() for stream in self._pipes.values()])
        if code is not None:
            self._end(code, JobStatus(Phase.KILLED if code < 0 else Phase.EXITED))
        return self._finish(done)

    def stop(self, sig, grace):
        ladder = (sig,) if sig != signal.SIGKILL else ()
        report = stop_tree(self.pid, leader=self.proc, marker=self.marker, ladder=ladder, grace=grace)
        self._poller.wake()
        return report

    def leftovers(self):
        return bool(remaining(self.pid, self.marker))
