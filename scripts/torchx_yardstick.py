"""Runs TorchX 0.7.0's own unit tests against jupyter_sched, with ``torchx`` rewritten to ``jupyter_sched``.

    .venv/bin/python scripts/torchx_yardstick.py /path/to/torchx          # a checkout of pytorch/torchx at v0.7.0
    .venv/bin/python scripts/torchx_yardstick.py /path/to/torchx -k docker  # extra arguments go to pytest

The test files README's "TorchX compatibility" counts: ``torchx/specs/test/*``,
``torchx/schedulers/test/{api,local_scheduler,docker_scheduler}_test.py`` and ``torchx/runner/test/api_test.py``.
They are copied, with the test-support modules they import, into a scratch copy of ``jupyter_sched``
(``--work``, a temporary directory by default); ``from torchx``, ``import torchx`` and ``torchx.<module>`` become
``jupyter_sched``. Two shims make every file import, so each test passes or fails on its own:

* modules outside the compared scope (``torchx.tracker``, ``torchx.runtime``, and ``torchx.util`` where we ship
  no such module) are taken from the installed ``torchx`` (``pip install 'jupyter_sched[torchx]'``);
* a TorchX-private name (leading underscore) that a test imports and we do not define becomes a stub that
  fails when used, so only the tests that use it fail.

Each failure is then looked up in ``EXPECTED`` below, which says why it fails: it asserts a TorchX defect
that we fixed (README's "What we fixed"), it reads or patches a TorchX-private name, or (``OPEN``) a known
difference that is neither, each named in README. A few tests race the replicas they start (``TIMING``):
they pass or fail by how busy the machine is, so either verdict is accepted and they are counted apart.
The script prints the tally and every failure with its reason, and exits 1 if a failure is not in the
table, or a test in it now passes (update the table and README), so two runs on any machine give the same
verdict. TorchX's sources are not in this repository and CI has no network: maintainers run this by hand
(the v0.7.0 tag of https://github.com/pytorch/torchx), on a machine set up as README says: the docker tests
need the engine, and ``test_docker_submit_dist`` the torch image and ``images/site`` that
``scripts/setup/images.sh`` builds and installs (its default image for ``dist.ddp``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List, Tuple

REPO = Path(__file__).resolve().parents[1]
TESTS = ["specs/test", "schedulers/test/api_test.py", "schedulers/test/local_scheduler_test.py",
         "schedulers/test/docker_scheduler_test.py", "runner/test/api_test.py"]  # fmt: skip
SUPPORT = ["test/__init__.py", "test/fixtures.py", "schedulers/test/__init__.py", "schedulers/test/test_util.py",
           "runner/test/__init__.py", "util/test/__init__.py", "util/test/entrypoints_test.py"]  # fmt: skip

FIXED = "fixed"  # asserts a TorchX defect we fixed (README: "What we fixed")
PRIVATE = "private"  # patches, reads or calls a TorchX-private name
OPEN = "open"  # neither: a known difference, named in README's compatibility section
TIMING = "timing"  # races the replicas it starts: passes or fails by how busy the machine is
_R, _S, _L, _D, _P = (
    "runner.test.api_test.RunnerTest::",
    "schedulers.test.api_test.SchedulerTest::",
    "schedulers.test.local_scheduler_test.LocalDirectorySchedulerTest::",
    "schedulers.test.docker_scheduler_test.",
    "specs.test.",
)
_MUTATES = "reads the runner's variables from the caller's AppDef: our dry run does not rewrite it"
_CANCEL = "state right after cancel: ours returns at once (RUNNING until the replicas exit; passes when they are quick)"
_EARLY = "reads log_iter(should_tail=False) right after submit: passes once the replica has written"
_CUDA = "patches LocalScheduler._cuda_device_count"
EXPECTED: Dict[str, Tuple[str, str]] = {
    _R + "test_dryrun": (FIXED, "expects submit_dryrun to get the caller's AppDef, rewritten: ours gets a copy"),
    _R + "test_dryrun_env_variables": (FIXED, _MUTATES),
    _R + "test_dryrun_setup_trackers": (FIXED, _MUTATES),
    _R + "test_dryrun_setup_trackers_as_env_variable": (FIXED, _MUTATES),
    _R + "test_dryrun_trackers_parent_run_id_as_paramenter": (FIXED, _MUTATES),
    _R + "test_dryrun_with_workspace": (FIXED, "two roles of the same name are refused"),
    _R + "test_status": (TIMING, _CANCEL),
    _R + "test_get_default_runner": (PRIVATE, "reads Runner._name (ours is 'default')"),
    _S + "test_split_lines_iterator": (FIXED, "lines are not cut at read boundaries"),
    _S + "test_submit_workspace": (FIXED, "a workspace does not rewrite the caller's AppDef"),
    _D + "DockerSchedulerLiveTest::test_docker_cancel": (FIXED, "cancel ends CANCELLED, not FAILED"),
    _L + "test_cache_evict": (FIXED, "eviction drops the oldest finished app"),
    _L + "test_cache_full": (FIXED, "eviction never refuses a submit"),
    _L + "test_cancel": (TIMING, _CANCEL),
    _L + "test_log_iterator_invalid_utf8": (TIMING, _EARLY),
    _L + "test_list": (FIXED, "local list works"),
    _L + "test_log_iterator_no_log_dir": (FIXED, "should_tail=False returns what is there now"),
    _L + "test_child_process_env_append_cwd": (PRIVATE, "calls LocalScheduler._popen"),
    _L + "test_child_process_env_none": (PRIVATE, "calls LocalScheduler._popen"),
    _L + "test_child_process_env_prepend_cwd": (PRIVATE, "calls LocalScheduler._popen"),
    _L + "test_close": (PRIVATE, "reads LocalScheduler._apps"),
    _L + "test_no_orphan_process_function": (PRIVATE, "reads LocalScheduler._apps"),
    _L + "test_submit": (PRIVATE, "reads LocalScheduler._created_tmp_log_dir"),
    _L + "test_submit_cleanup": (PRIVATE, "reads LocalScheduler._base_log_dir"),
    "schedulers.test.local_scheduler_test.JoinPATHTest::test_join_PATH": (PRIVATE, "calls _join_PATH"),
    **{_L + name: (PRIVATE, _CUDA) for name in [
        "test_auto_set_CUDA_VISIBLE_DEVICES", "test_auto_set_CUDA_VISIBLE_DEVICES_false",
        "test_auto_set_CUDA_VISIBLE_DEVICES_more_gpus_then_available", "test_auto_set_CUDA_VISIBLE_DEVICES_multi_role",
        "test_auto_set_CUDA_VISIBLE_DEVICES_no_gpus_on_host", "test_auto_set_CUDA_VISIBLE_DEVICES_no_requested_gpus",
        "test_get_cuda_devices_is_set", "test_get_cuda_devices_not_set", "test_get_gpu_device_count",
        "test_get_gpu_device_count_error",
    ]},
    _P + "api_test.AppDefStatusTest::test_format_error_message": (PRIVATE, "calls AppStatus._format_error_message"),
    _P + "api_test.AppDefStatusTest::test_is_terminal": (PRIVATE, "reads _TERMINAL_STATES"),
    _P + "api_test.RunConfigTest::test_cfg_from_str": (FIXED, "an option whose default is not of its type is an error"),
    _P + "api_test.RunConfigTest::test_runopts_resolve_unioned": (FIXED, "unknown cfg keys are errors"),
    _P + "builders_test.AppDefLoadTest::test_argparser_remainder_main_args": (PRIVATE, "calls _create_args_parser"),
    _P + "builders_test.AppDefLoadTest::test_argparster_complex_fn_partial": (PRIVATE, "calls _create_args_parser"),
    **{_P + "finder_test.FinderTest::" + name: (PRIVATE, "patches _load_components") for name in [
        "test_get_entrypoints_components", "test_get_invalid_component", "test_load_builtin_echo",
        "test_load_builtins", "test_load_custom_components", "test_load_custom_components_nogroup",
    ]},
    _P + "named_resources_test.NamedResourcesTest::test_named_resources_library": (
        PRIVATE, "patches _named_resource_factories",
    ),
}  # fmt: skip
"""``file::Class::test`` → (kind, why): every test of those files that fails against us, and why."""


def rewrite(text: str) -> str:
    text = re.sub(r"\bimport torchx\b", "import jupyter_sched", text)
    text = re.sub(r"\bfrom torchx\b", "from jupyter_sched", text)
    return re.sub(r"\btorchx\.(?=[a-z_])", "jupyter_sched.", text)


CONFTEST = '''
import ast, glob, importlib, importlib.abc, importlib.util, os, sys

OUTSIDE = ("jupyter_sched.tracker", "jupyter_sched.runtime", "jupyter_sched.util")
HERE = os.path.dirname(os.path.abspath(__file__))


class _FromTorchX(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """jupyter_sched.<outside module> -> the installed torchx's, unless the scratch copy has it."""

    def find_spec(self, name, path, target=None):
        if not name.startswith(OUTSIDE):
            return None
        rel = os.path.join(HERE, *name.split("."))
        if os.path.exists(rel + ".py") or os.path.isdir(rel):
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module("torchx" + spec.name[len("jupyter_sched"):])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _FromTorchX())

IMPORTED = set()
for p in glob.glob(os.path.join(HERE, "jupyter_sched", "**", "*_test.py"), recursive=True):
    for node in ast.walk(ast.parse(open(p).read())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jupyter_sched"):
            IMPORTED.update(a.name for a in node.names if a.name.startswith("_"))


class PrivateName:
    def __init__(self, name):
        self.name = name

    def _fail(self, *args, **kwargs):
        raise AttributeError(f"TorchX-private {self.name} is not provided by jupyter_sched")

    __call__ = __iter__ = _fail

    def __getattr__(self, attr):
        self._fail()


def _stub_private_names(module):
    previous = getattr(module, "__getattr__", None)

    def __getattr__(name):
        if previous is not None:
            try:
                return previous(name)
            except AttributeError:
                pass
        if name in IMPORTED:
            return PrivateName(f"{module.__name__}.{name}")
        raise AttributeError(name)

    module.__getattr__ = __getattr__


for name in ["specs", "specs.api", "specs.builders", "specs.finder", "specs.file_linter", "schedulers.api",
             "schedulers.local_scheduler", "schedulers.docker_scheduler", "runner", "runner.api"]:
    _stub_private_names(importlib.import_module("jupyter_sched." + name))
'''


def copy_tree(torchx: Path, work: Path) -> List[str]:
    shutil.copytree(REPO / "jupyter_sched", work / "jupyter_sched", ignore=shutil.ignore_patterns("__pycache__"))
    files: List[Path] = []
    for rel in TESTS + SUPPORT:
        src = torchx / rel
        files += sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else [src]
    targets = []
    for src in files:
        dst = work / "jupyter_sched" / src.relative_to(torchx)
        dst.parent.mkdir(parents=True, exist_ok=True)
        for parent in [dst.parent, *dst.parent.parents]:
            if parent == work / "jupyter_sched":
                break
            (parent / "__init__.py").touch()
        text = src.read_text()
        dst.write_text(rewrite(text) if src.suffix == ".py" else text)
        if src.name.endswith("_test.py") and not str(src.relative_to(torchx)).startswith(tuple(SUPPORT)):
            targets.append(str(dst.relative_to(work)))
    (work / "conftest.py").write_text(CONFTEST)
    return targets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("torchx", type=Path, help="the torchx/ package directory of a TorchX v0.7.0 checkout")
    parser.add_argument("--work", type=Path, help="scratch directory (default: a new temporary one)")
    args, pytest_args = parser.parse_known_args()
    torchx = args.torchx / "torchx" if (args.torchx / "torchx" / "specs").is_dir() else args.torchx
    work = args.work or Path(tempfile.mkdtemp(prefix="jsched-yardstick-"))
    shutil.rmtree(work / "jupyter_sched", ignore_errors=True)
    targets = copy_tree(torchx, work)
    report = work / "junit.xml"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(work)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-o",
         "python_files=*_test.py", "--junitxml", str(report), *pytest_args, *sorted(targets)],
        cwd=work, env=env, capture_output=True, text=True,
    )  # fmt: skip
    (work / "pytest.out").write_text(run.stdout + run.stderr)
    passed, failed = [], []
    for case in ET.parse(report).getroot().iter("testcase"):
        test_id = "{}::{}".format(case.get("classname", "").replace("jupyter_sched.", "", 1), case.get("name"))
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is None and case.find("skipped") is None:
            passed.append(test_id)
        elif bad is not None:
            failed.append((test_id, (bad.get("message") or "").splitlines()[0][:160] if bad.get("message") else ""))
    unexpected = [(t, m) for t, m in failed if t not in EXPECTED]
    now_pass = [t for t in passed if t in EXPECTED and EXPECTED[t][0] != TIMING]
    racing = [t for t in EXPECTED if EXPECTED[t][0] == TIMING]
    print(f"\n{len(racing)} race the replicas they start (either verdict is accepted):")
    for test_id in racing:
        print(f"  {test_id}: {'passed' if test_id in passed else 'failed'} this run; {EXPECTED[test_id][1]}")
    for kind in (FIXED, PRIVATE, OPEN):
        rows = [(t, EXPECTED[t][1]) for t, _ in failed if EXPECTED.get(t, ("",))[0] == kind]
        print(f"\n{len(rows)} fail as expected ({kind}):")
        for test_id, why in rows:
            print(f"  {test_id}: {why}")
    print(f"\n{len(unexpected)} fail unexpectedly:")
    for test_id, message in unexpected:
        print(f"  {test_id}: {message}")
    for test_id in now_pass:
        print(f"  now passes (drop it from EXPECTED): {test_id}")
    total = len(passed) + len(failed)
    steady = len([t for t in passed if t not in racing])
    print(f"\n{steady} pass on every run, {len(racing)} race their replicas, {total - steady - len(racing)} fail as"
          f" listed, of {total} (this run: {len(passed)} passed, {len(failed)} failed; pytest output:"
          f" {work}/pytest.out)")
    return 1 if unexpected or now_pass else 0


if __name__ == "__main__":
    sys.exit(main())
