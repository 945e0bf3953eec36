"""Ray's Jobs REST API, spoken with the standard library (``urllib``): submit, status, logs, stop,
delete, list, and the upload of a working directory.

Not the ``ray`` package: it weighs hundreds of megabytes and pins its own dependencies, while the
dashboard's HTTP API is small and stable (the one Ray's own ``JobSubmissionClient`` uses).  Every
call is bounded by a timeout (a kernel must never hang on a dashboard) and every failure becomes
one :class:`RayError` whose fields say what happened -- ``code`` (``ECONNREFUSED``, ``ETIMEDOUT``,
``EINVAL`` for a refused request, ``ENOENT`` for a job Ray no longer knows, ``EIO`` for a dashboard
that answered 500) and ``http_status`` -- so callers branch on fields, never on the message.

The address is a dashboard URL (``http://host:8265``).  Ray's own clients also accept a GCS
address (``host:6379``), ``auto`` or a Ray Client address (``ray://…``) in ``RAY_ADDRESS``; those
reach no REST API, so :func:`dashboard_address` refuses them in one line that says what to give.
Headers for a dashboard behind a proxy or a token come from ``RAY_JOB_HEADERS`` (a JSON object, as
Ray's CLI reads it) or the caller; they are sent and never shown (no message, no ``repr`` quotes
them).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import io
import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Mapping
from typing import Any

from ....process.errors import PreExecError, UsageProblem, shown_value
from ....process.records import record

__all__ = [
    "DEFAULT_ADDRESS",
    "JobInfo",
    "RayClient",
    "RayError",
    "RayPhase",
    "dashboard_address",
    "job_headers",
    "zip_folder",
]

#: Where Ray's job CLI looks when ``RAY_ADDRESS`` is not set: the dashboard of a head on this machine.
DEFAULT_ADDRESS = "http://127.0.0.1:8265"
#: Characters of Ray's answer a message quotes (its 400 and 500 answers are whole Python tracebacks).
_QUOTED = 300


class RayError(PreExecError):
    """A request to Ray's dashboard failed; ``str()`` is the one-line ``exec: … (CODE)`` form.

    ``code``: ``ECONNREFUSED`` (nothing answers at the address), ``ETIMEDOUT``, ``EINVAL`` (Ray
    refused the request: HTTP 400), ``ENOENT`` (no such job: HTTP 404), ``EIO`` (the dashboard
    failed: HTTP 500, or an answer that is not Ray's), ``EACCES`` (HTTP 401/403: the headers).
    """

    def __init__(self, issue: str, code: str, *, http_status: int | None = None, address: str = "") -> None:
        super().__init__(issue, code, exit_code=1)
        self.http_status = http_status
        self.address = address


class RayPhase(enum.Enum):
    """A job's state as Ray's ``JobStatus`` names it."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    STOPPED = "STOPPED"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"

    @property
    def terminal(self) -> bool:
        return self in (RayPhase.STOPPED, RayPhase.SUCCEEDED, RayPhase.FAILED)


@record
class JobInfo:
    """One submitted job, as ``GET /api/jobs/ID`` describes it (the fields the backend reads)."""

    submission_id: str
    phase: RayPhase
    message: str = ""
    error_type: str | None = None
    driver_exit_code: int | None = None
    #: ``http://IP:PORT`` of the node's agent that runs the job's driver (``None`` until it started).
    driver_agent_http_address: str | None = None
    driver_node_id: str | None = None
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)
    entrypoint: str = ""
    start_time: int | None = None  # milliseconds since the epoch
    end_time: int | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JobInfo:
        try:
            phase = RayPhase(data.get("status"))
        except ValueError:
            phase = RayPhase.FAILED  # a state this client does not know: not one to wait on
        code = data.get("driver_exit_code")
        metadata = data.get("metadata") or {}
        return cls(submission_id=str(data.get("submission_id") or ""), phase=phase,
                   message=str(data.get("message") or ""), error_type=data.get("error_type"),
                   driver_exit_code=code if isinstance(code, int) else None,
                   driver_agent_http_address=data.get("driver_agent_http_address"),
                   driver_node_id=data.get("driver_node_id"),
                   metadata={str(k): str(v) for k, v in metadata.items()} if isinstance(metadata, dict) else {},
                   entrypoint=str(data.get("entrypoint") or ""), start_time=data.get("start_time"),
                   end_time=data.get("end_time"))


def dashboard_address(address: str | None = None) -> str:
    """The dashboard URL to talk to: ``address`` (a setting), else ``RAY_ADDRESS``, else
    :data:`DEFAULT_ADDRESS`; without a trailing slash.  Anything but an ``http(s)://`` URL is
    refused in one line that says what to give instead."""
    source = "the Ray address"
    if not address:
        address = os.environ.get("RAY_ADDRESS", "").strip()
        source = "RAY_ADDRESS"
    if not address:
        return DEFAULT_ADDRESS
    parsed = urllib.parse.urlsplit(address)
    if parsed.scheme in ("http", "https") and parsed.hostname:
        return address.rstrip("/")
    if address == "auto":
        why = "'auto' finds a local Ray for Ray's Python API, not its dashboard"
    elif parsed.scheme == "ray":
        why = "a ray:// address is Ray Client's, not the dashboard's"
    else:
        why = "that is no dashboard URL (a host:port without http:// is the GCS address)"
    raise UsageProblem(f"{source} {shown_value(address)}: {why}; give the dashboard's URL,"
                       " e.g. http://HEAD:8265")


def job_headers(headers: Mapping[str, str] | None = None) -> dict[str, str]:
    """Extra HTTP headers for every request: ``headers`` when given, else ``RAY_JOB_HEADERS`` (a
    JSON object, as Ray's own CLI reads it).  A malformed value is refused without quoting it (it
    usually holds a token)."""
    if headers is not None:
        return {str(k): str(v) for k, v in headers.items()}
    raw = os.environ.get("RAY_JOB_HEADERS", "").strip()
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise UsageProblem("RAY_JOB_HEADERS is not a JSON object of header names to values"
                           " (its value is not shown: it may hold a token)")
    return {str(k): str(v) for k, v in parsed.items()}


def _ray_says(body: bytes) -> str:
    """Ray's error answer as one short line, for people: its 400 and 500 answers are Python
    tracebacks (an agent's, nested in the head's), so the last exception line, else the last line."""
    lines = [line.strip() for line in body.decode("utf-8", "replace").splitlines() if len(line.strip()) > 1]
    named = [line for line in lines if not line.startswith("File ") and ("Error" in line or "Exception" in line)]
    text = (named or lines or ["no message"])[-1]
    return text if len(text) <= _QUOTED else text[:_QUOTED] + "…"


def zip_folder(path: str) -> bytes:
    """``path``'s files as the zip Ray unpacks as a job's working directory (paths relative to the
    folder, no top-level folder), in a stable order so the same folder gives the same package."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(root, name)
                if os.path.isfile(full):
                    info = zipfile.ZipInfo.from_file(full, os.path.relpath(full, path))
                    info.date_time = (1980, 1, 1, 0, 0, 0)  # the content, not the time, names the package
                    info.compress_type = zipfile.ZIP_DEFLATED
                    with open(full, "rb") as fh:
                        archive.writestr(info, fh.read())
    return buffer.getvalue()


class RayClient:
    """Requests to one Ray dashboard; each raises :class:`RayError` in one line."""

    def __init__(self, address: str | None = None, *, headers: Mapping[str, str] | None = None,
                 timeout: float = 30.0) -> None:
        self.address = dashboard_address(address)
        #: Sent with every request; never shown (see :meth:`__repr__`).
        self.headers = job_headers(headers)
        #: Seconds any one request may take.
        self.timeout = timeout

    def __repr__(self) -> str:  # never the headers: they may carry a token
        return f"RayClient({self.address!r})"

    # -- the requests -----------------------------------------------------------------
    def version(self) -> dict[str, Any]:
        """``GET /api/version``: proves a dashboard answers (``ray_version``)."""
        answer = self._json("GET", "/api/version", what="asking Ray for its version")
        if not isinstance(answer, dict) or "ray_version" not in answer:
            raise RayError(f"{self.address} answered, but not as a Ray dashboard does", "EIO", address=self.address)
        return answer

    def submit(self, body: Mapping[str, Any]) -> str:
        """``POST /api/jobs/``: submit a job; its submission id."""
        answer = self._json("POST", "/api/jobs/", body, what="submitting the job to Ray")
        sid = answer.get("submission_id") if isinstance(answer, dict) else None
        if not isinstance(sid, str) or not sid:
            raise RayError("Ray did not answer the submission with a job id", "EIO", address=self.address)
        return sid

    def info(self, submission_id: str) -> JobInfo:
        """``GET /api/jobs/ID`` (``ENOENT``: Ray does not know the job, or no longer)."""
        answer = self._json("GET", f"/api/jobs/{_quote(submission_id)}", what=f"asking Ray about job {submission_id}")
        return JobInfo.from_json(answer if isinstance(answer, dict) else {})

    def jobs(self) -> list[JobInfo]:
        """``GET /api/jobs/``: every job the cluster knows (submitted ones; drivers are left out)."""
        answer = self._json("GET", "/api/jobs/", what="listing Ray's jobs")
        return [JobInfo.from_json(job) for job in answer if isinstance(job, dict) and job.get("submission_id")
                and job.get("type", "SUBMISSION") == "SUBMISSION"] if isinstance(answer, list) else []

    def logs(self, submission_id: str) -> str:
        """``GET /api/jobs/ID/logs``: the job's whole log so far (Ray gives no offset: callers cut)."""
        answer = self._json("GET", f"/api/jobs/{_quote(submission_id)}/logs",
                            what=f"reading the log of Ray job {submission_id}")
        logs = answer.get("logs") if isinstance(answer, dict) else None
        return logs if isinstance(logs, str) else ""

    def stop(self, submission_id: str) -> bool:
        """``POST /api/jobs/ID/stop``: False when the job had already ended."""
        answer = self._json("POST", f"/api/jobs/{_quote(submission_id)}/stop", what=f"stopping Ray job {submission_id}")
        return bool(answer.get("stopped")) if isinstance(answer, dict) else False

    def delete(self, submission_id: str) -> bool:
        """``DELETE /api/jobs/ID``: forget a finished job (its record and log)."""
        answer = self._json("DELETE", f"/api/jobs/{_quote(submission_id)}", what=f"deleting Ray job {submission_id}")
        return bool(answer.get("deleted")) if isinstance(answer, dict) else False

    def upload_folder(self, path: str) -> str:
        """Upload ``path`` as a package (once: a package already there is not sent again); the
        ``gcs://`` URI to give as the runtime environment's ``working_dir``."""
        if not os.path.isdir(path):
            raise UsageProblem(f"--working-dir {shown_value(path)} is not a folder here")
        data = zip_folder(path)
        name = f"_ray_pkg_{hashlib.sha256(data).hexdigest()[:32]}.zip"
        try:
            self._request("GET", f"/api/packages/gcs/{name}", what="looking up the working dir")
        except RayError as exc:
            if exc.code != "ENOENT":
                raise
            self._request("PUT", f"/api/packages/gcs/{name}", data, what=f"uploading {path} to Ray",
                          content_type="application/zip")
        return f"gcs://{name}"

    # -- the transport ----------------------------------------------------------------
    def _json(self, method: str, path: str, body: Mapping[str, Any] | None = None, *, what: str) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        raw = self._request(method, path, data, what=what, content_type="application/json")
        try:
            return json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise RayError(f"{what}: the answer from {self.address} is not JSON (is it a Ray dashboard?)", "EIO",
                           address=self.address) from None

    def _request(self, method: str, path: str, data: bytes | None = None, *, what: str,
                 content_type: str = "application/json") -> bytes:
        headers = {**self.headers}
        if data is not None:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(self.address + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return answer.read()
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc, what) from None
        except TimeoutError:
            raise RayError(f"{what}: no answer from {self.address} within {self.timeout:g} s", "ETIMEDOUT",
                           address=self.address) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise RayError(f"{what}: no answer from {self.address} within {self.timeout:g} s", "ETIMEDOUT",
                               address=self.address) from None
            why = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
            raise RayError(f"{what}: no Ray dashboard at {self.address} ({why})", "ECONNREFUSED",
                           address=self.address) from None
        except (OSError, ValueError) as exc:  # a connection reset mid-answer, a malformed URL
            raise RayError(f"{what}: {self.address} failed: {exc}", "EIO", address=self.address) from None

    def _http_error(self, exc: urllib.error.HTTPError, what: str) -> RayError:
        with exc:
            body = exc.read()
        status = exc.code
        if status == 404:
            return RayError(f"{what}: Ray does not know it (deleted, or another cluster)", "ENOENT",
                            http_status=status, address=self.address)
        if status in (401, 403):
            return RayError(f"{what}: the dashboard refused us (HTTP {status}): check RAY_JOB_HEADERS", "EACCES",
                            http_status=status, address=self.address)
        if 400 <= status < 500:
            return RayError(f"{what}: Ray refused it: {_ray_says(body)}", "EINVAL", http_status=status,
                            address=self.address)
        return RayError(f"{what}: the dashboard failed (HTTP {status}): {_ray_says(body)}", "EIO",
                        http_status=status, address=self.address)


def _quote(submission_id: str) -> str:
    return urllib.parse.quote(submission_id, safe="")
