"""A notebook's session with the toy backend, in a Python of its own: the toy is registered before
``%load_ext execmagic`` (the magics build ``--on`` and its flags from the registry when they load),
then ``%bg --on toy``, ``%bgout``, ``%kill`` and ``execmagic.start(on="toy")`` run through it in a real
InteractiveShell.  What each showed is printed as one JSON object for the test to check.

Run by ``test_third_backend.py`` as ``python toy_session.py FOLDER`` with ``tests`` and
``tests/background`` on the path.
"""

from __future__ import annotations

import json
import sys

from IPython.core.interactiveshell import InteractiveShell
from toy_backend.spec import SPEC

import execmagic
from execmagic.background.backends import registry
from execmagic.display import PROVENANCE_MIME
from magic_calls import magic


def provenance(cap):
    return [o.data[PROVENANCE_MIME] for o in cap.outputs if PROVENANCE_MIME in o.data]


def text(cap):
    return [o.data["text/plain"] for o in cap.outputs if "text/plain" in o.data]


def read_to_end(ip, shell_id):
    out, err = [], []
    for _ in range(100):
        cap = magic(ip, "bgout", f"{shell_id} --wait 5")
        out.append(cap.stdout)
        err.append(cap.stderr)
        info = provenance(cap)[0]
        if info["at_end"]:
            return "".join(out), "".join(err), info["shell"]
    raise AssertionError(f"{shell_id} never ended")


def main(folder: str) -> dict:
    registry.register(SPEC)
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "execmagic")
    ip.display_formatter.active_types = ["text/plain", PROVENANCE_MIME]
    ip.run_line_magic("config", f"ToyBackend.folder = {folder!r}")
    ip.run_line_magic("config", "ExecMagics.kill_grace = 0.5")
    seen: dict = {}
    started = magic(ip, "bg", "--on toy --cpus 2 --name job for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 3")
    seen["started"] = {"text": text(started), "provenance": provenance(started)}
    seen["job"] = read_to_end(ip, "job")
    magic(ip, "bg", "--on toy --name long echo begun; sleep 300")
    seen["long_first"] = magic(ip, "bgout", "long --wait 5").stdout
    killed = magic(ip, "kill", "long")
    seen["killed"] = {"text": text(killed), "provenance": provenance(killed)}
    seen["long"] = read_to_end(ip, "long")
    info = execmagic.start("echo from the api", on="toy", engine=ip.magics_manager.registry["ExecMagics"].engine)
    seen["api"] = {"backend": info.backend, "id": info.id}
    seen["api_out"] = read_to_end(ip, info.id)
    seen["listing"] = provenance(magic(ip, "bg", ""))
    try:
        magic(ip, "bg", "--on toy --partition gpu echo no")
    except Exception as exc:  # a flag of another backend: one line naming the backends that take it
        seen["wrong_flag"] = str(exc)
    ip.run_line_magic("unload_ext", "execmagic")
    return seen


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
