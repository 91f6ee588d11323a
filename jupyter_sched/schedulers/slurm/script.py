"""The batch script's text: the ``#SBATCH`` lines, the preamble every replica relies on, and one ``srun``.

The script is what ``sbatch`` runs and also what a dry run shows, so it is laid out to be read: one option per
line, a ``#SBATCH hetjob`` line between het-job components, each ``srun`` group and each ``-e`` of the replica
wrapper on a line of its own, and a comment saying how to submit it by hand. The preamble puts the rank-0
node's address in ``$TORCHX_RANK0_HOST`` (TorchX's name) and, with ``max_retries``, the tail requeues a failed
attempt. ``${app_id}`` is the Slurm job id, known only once the job runs: the request carries a marker in its
place, which :func:`shell_word` renders as ``"$SLURM_JOB_ID"``.
"""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING

from jupyter_sched.schedulers.slurm.files import WRAPPER_NAME

if TYPE_CHECKING:
    from jupyter_sched.schedulers.slurm.batch import SlurmBatchRequest

RANK0_ENV = "TORCHX_RANK0_HOST"  # TorchX's name, so code written for TorchX finds rank 0

# ${app_id} is the Slurm job id, known only once the job runs: it is rendered as "$SLURM_JOB_ID".
APP_ID_MARK = "\x00app_id\x00"
_JOB_ID_SHELL = '"$SLURM_JOB_ID"'


def shell_word(text: str) -> str:
    """``text`` quoted for bash, with every ``${app_id}`` (already replaced by a marker) expanding to the
    job id at run time."""
    parts = text.split(APP_ID_MARK)
    if len(parts) == 1:
        return shlex.quote(text)
    out = []
    for i, part in enumerate(parts):
        if i:
            out.append(_JOB_ID_SHELL)
        if part:
            out.append(shlex.quote(part))
    return "".join(out)


def readable(text: str) -> str:
    """``text`` for people: each ``${app_id}`` marker shown as ``${SLURM_JOB_ID}``."""
    return text.replace(APP_ID_MARK, "${SLURM_JOB_ID}")


def render_script(req: SlurmBatchRequest) -> str:
    """The batch script: one ``#SBATCH`` option per line (a ``#SBATCH hetjob`` line between components), then
    one ``srun`` whose groups and options are on lines of their own."""
    wrapper_src = os.path.join(os.path.dirname(os.path.abspath(__file__)), WRAPPER_NAME)
    app_dir = shlex.quote(req.app_dir)
    lines = [
        "#!/bin/bash",
        f"# jupyter_sched app {req.app_name!r} (session {req.session!r}): {len(req.replicas)} replica(s),"
        + (" one het-job component each." if req.heterogeneous else " a plain job."),
        f"# jupyter_sched submits it as {shlex.quote(req.script_path)}, with the replicas' log wrapper beside it.",
        "# To submit it yourself, put the wrapper there first:",
        f"#   umask 077 && mkdir -p {app_dir} && cp {shlex.quote(wrapper_src)} {app_dir}/"
        " && sbatch --parsable THIS_FILE",
    ]
    for rep in req.replicas:
        if rep.offset:
            lines.append("#SBATCH hetjob")
        opts = rep.sbatch_opts + (req.job_opts if rep.offset == 0 else [])
        lines += ["#SBATCH " + opt for opt in opts]
    lines += [
        "",
        "# What the job writes (logs, srun messages) is for its owner only.",
        "umask 077",
        "# srun writes each replica's own messages into <role>/<k>/srun.log: its directory must exist.",
        "mkdir -p " + " ".join(shlex.quote(rep.dir) for rep in req.replicas),
        "# Replicas find the rank-0 node's address in $" + RANK0_ENV + ".",
        'rank0_node=$(scontrol show hostnames "${SLURM_JOB_NODELIST_HET_GROUP_0:-$SLURM_JOB_NODELIST}" | head -n 1)',
        f"{RANK0_ENV}=$(scontrol show node \"$rank0_node\" 2>/dev/null | sed -n 's/.*NodeAddr=\\([^ ]*\\).*/\\1/p')",
        f'export {RANK0_ENV}="${{{RANK0_ENV}:-$rank0_node}}"',
        "export PYTHONUNBUFFERED=1",
        'echo "jupyter_sched: job $SLURM_JOB_ID attempt ${SLURM_RESTART_COUNT:-0} on $SLURM_JOB_NODELIST'
        f' (rank 0: ${RANK0_ENV})"',
        "",
    ]
    groups = []
    for rep in req.replicas:
        words = rep.srun_opts + rep.command
        # the options, then the wrapper and its replica dir, each -e, and the command: each on a line of its own
        parts, i = [" ".join(rep.srun_opts)], len(rep.srun_opts)
        sep = words.index("--", i)
        head = words[i:sep]
        parts.append(" ".join(head[:3]))
        parts += [" ".join(head[j : j + 2]) for j in range(3, len(head), 2)]
        parts.append(" ".join(words[sep:]))
        groups.append(" \\\n    ".join(p for p in parts if p))
    lines.append("srun " + " \\\n  : ".join(groups))
    lines.append("rc=$?")
    if req.max_retries > 0:
        lines += [
            f'if [ "$rc" -ne 0 ] && [ "${{SLURM_RESTART_COUNT:-0}}" -lt {req.max_retries} ]; then',
            '    echo "jupyter_sched: attempt ${SLURM_RESTART_COUNT:-0} failed (exit $rc): requeueing" >&2',
            '    scontrol requeue "$SLURM_JOB_ID"',
            "fi",
        ]
    lines.append('exit "$rc"')
    return "\n".join(lines) + "\n"
