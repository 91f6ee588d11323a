"""Loading, unloading and configuring the extension; import cost; the auto-load command."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from IPython.core.error import UsageError
from traitlets import TraitError

from jupyter_sched.notebook import autoload
from jupyter_sched.notebook.extension import load, loaded, unload

MAGICS = {"sched_run", "sched_logs", "sched_status", "sched_job", "sched_list", "sched_cancel", "sched_describe"}


def _run(code: str, env: Any = None) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_jupyter_sched_does_not_import_ipython_or_widgets() -> None:
    got = _run(
        "import sys, jupyter_sched; print(sorted(m for m in ('IPython', 'ipywidgets', 'docker') if m in sys.modules))"
    )
    assert got == "[]"


def test_load_ext_registers_magics_without_importing_widgets(tmp_path: Any) -> None:
    code = (
        "import sys\n"
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "ip.run_line_magic('load_ext', 'jupyter_sched')\n"
        "names = set(ip.magics_manager.magics['line']) & " + repr(MAGICS) + "\n"
        "print(len(names), 'sched_run' in ip.magics_manager.magics['cell'], 'ipywidgets' in sys.modules,"
        " 'docker' in sys.modules)\n"
    )
    env = {**os.environ, "IPYTHONDIR": str(tmp_path)}
    assert _run(code, env) == f"{len(MAGICS)} True False False"


def test_load_is_idempotent_and_unload_removes_everything(ip: Any) -> None:
    first = load(ip)
    assert load(ip) is first
    ip.run_line_magic("load_ext", "jupyter_sched")  # already loaded: no second instance
    assert loaded(ip) is first
    html = ip.display_formatter.formatters["text/html"]
    assert ("jupyter_sched.specs.status.state", "AppStatus") in html.deferred_printers or any(
        t.__name__ == "AppStatus" for t in html.type_printers
    )
    try:
        unload(ip)
        unload(ip)  # idempotent
        assert not MAGICS & set(ip.magics_manager.magics["line"])
        assert "sched_run" not in ip.magics_manager.magics["cell"]
        assert first not in ip.configurables
        assert not any(t.__name__ == "AppStatus" for t in html.type_printers)
        assert ("jupyter_sched.specs.status.state", "AppStatus") not in html.deferred_printers
        with pytest.raises(UsageError):
            ip.run_line_magic("sched_list", "")
    finally:
        again = load(ip)
    assert again is not first and MAGICS <= set(ip.magics_manager.magics["line"])
    assert sum(1 for c in ip.configurables if type(c).__name__ == "SchedMagics") == 1


def test_reload_ext_gives_one_working_instance(ip: Any, magics: Any) -> None:
    ip.run_line_magic("reload_ext", "jupyter_sched")
    assert sum(1 for c in ip.configurables if type(c).__name__ == "SchedMagics") == 1
    assert ip.magics_manager.magics["line"]["sched_list"].__self__ is loaded(ip)


def test_config_magic_lists_and_sets_traits(ip: Any, magics: Any, capsys: Any) -> None:
    ip.run_line_magic("config", "SchedMagics")
    listing = capsys.readouterr().out
    for trait in ("default_scheduler", "scheduler_cfg", "refresh_interval", "tail_lines", "keep_lines",
                  "cancel_on_interrupt", "session_name", "log_dir", "interactive", "wait"):  # fmt: skip
        assert f"SchedMagics.{trait}" in listing
    ip.run_line_magic("config", "SchedMagics.refresh_interval = 0.5")
    assert magics.refresh_interval == 0.5
    assert magics.pane_settings().refresh_interval == 0.5
    with pytest.raises(TraitError):
        magics.refresh_interval = 0.001
    with pytest.raises(TraitError):
        magics.tail_lines = 0


def test_scheduler_cfg_must_map_schedulers_to_options(ip: Any, magics: Any) -> None:
    with pytest.raises(TraitError, match=r"scheduler_cfg\['local_cwd'\].*5.*dict of run options"):
        magics.scheduler_cfg = {"local_cwd": 5}
    with pytest.raises(TraitError, match="cancel_grace=2"):
        magics.scheduler_cfg = {"local_cwd": "cancel_grace=2"}
    magics.scheduler_cfg = {"local_cwd": {"cancel_grace": "2"}}


def test_a_bad_config_value_does_not_stop_the_extension_loading(ip: Any, magics: Any) -> None:
    """%config with a bad value is refused, but IPython keeps it in the shell's config (as a bad value in
    ipython_kernel_config.py would be): loading again must still work, warn naming the value, keep the
    good values and use the default for the bad one."""
    ip.run_line_magic("config", "SchedMagics.tail_lines = 77")
    ip.run_line_magic("config", "SchedMagics.refresh_interval = 0.001")
    assert magics.refresh_interval == 0.25 and magics.tail_lines == 77
    try:
        unload(ip)
        with pytest.warns(UserWarning, match=r"SchedMagics.refresh_interval = 0.001.*>= 0.05"):
            again = load(ip)
        assert again.tail_lines == 77 and again.refresh_interval == 0.25
        assert sum(1 for c in ip.configurables if type(c).__name__ == "SchedMagics") == 1
    finally:
        del ip.config.SchedMagics["refresh_interval"]
        del ip.config.SchedMagics["tail_lines"]
        current = loaded(ip)
        current.tail_lines = type(current).tail_lines.default_value


def test_interactive_defaults_off_in_a_terminal_and_with_the_env_var(monkeypatch: Any) -> None:
    from jupyter_sched.notebook.kernel.config import SchedConfig

    class FakeKernelShell:
        kernel = object()

    class Probe(SchedConfig):
        shell = FakeKernelShell()

    assert Probe().interactive is True
    monkeypatch.setenv("JUPYTER_SCHED_NONINTERACTIVE", "1")
    assert Probe().interactive is False
    monkeypatch.delenv("JUPYTER_SCHED_NONINTERACTIVE")
    Probe.shell = None  # type: ignore[assignment]
    assert Probe().interactive is False


def test_kernel_config_file_sets_traits(tmp_path: Any) -> None:
    """c.SchedMagics.* in a config file reaches the magics (what ipython_kernel_config.py does)."""
    profile = tmp_path / "profile_default"
    profile.mkdir()
    (profile / "ipython_config.py").write_text(
        "c.InteractiveShellApp.extensions = ['jupyter_sched']\nc.SchedMagics.tail_lines = 123\n"
    )
    code = (
        "from jupyter_sched.notebook.extension import loaded\n"
        "print(loaded(get_ipython()).tail_lines)\n"
    )
    env = {**os.environ, "IPYTHONDIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", "-c", code],
                         capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "123"


def test_autoload_enable_disable_is_idempotent(tmp_path: Any, capsys: Any) -> None:
    path = autoload.config_path("default", str(tmp_path))
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write("c.Foo.bar = 1")  # the user's own config, without a final newline
    assert autoload.main(["enable", "--ipython-dir", str(tmp_path)]) == 0
    assert autoload.enable(path) is False
    text = open(path).read()
    assert text.startswith("c.Foo.bar = 1\n") and text.count(autoload.BEGIN) == 1
    assert 'extensions.append("jupyter_sched")' in text
    assert autoload.status(path) == "enabled"
    assert autoload.enable(path, lazy=True) is True
    assert open(path).read().count(autoload.BEGIN) == 1 and autoload.status(path) == "enabled (lazy)"
    assert autoload.main(["disable", "--ipython-dir", str(tmp_path)]) == 0
    assert open(path).read() == "c.Foo.bar = 1\n"
    assert autoload.disable(path) is False
    assert str(path) in capsys.readouterr().out


@pytest.mark.parametrize("lazy", [False, True])
def test_autoload_block_loads_the_extension_in_ipython(tmp_path: Any, lazy: bool) -> None:
    profile = tmp_path / "profile_default"
    path = str(profile / "ipython_config.py")  # the terminal reads ipython_config.py; kernels the kernel file
    autoload.enable(path, lazy=lazy)
    code = "%sched_list\nprint('sched_run' in get_ipython().magics_manager.magics['line'])"
    env = {**os.environ, "IPYTHONDIR": str(tmp_path)}
    script = tmp_path / "probe.ipy"
    script.write_text(code)
    out = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", str(script)],
                         capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "True"


def test_checked_config_keeps_good_and_lazy_values_and_drops_bad_ones() -> None:
    from traitlets.config import Config

    from jupyter_sched.notebook.kernel.config import checked_config

    c = Config()
    c.SchedMagics.list_schedulers.append("local_docker")  # a LazyConfigValue, resolved only for the check
    c.SchedMagics.keep_lines = 10
    assert checked_config(c) == (c, [])
    c.SchedMagics.keep_lines = -1
    good, problems = checked_config(c)
    assert problems == ["SchedMagics.keep_lines = -1 ignored (using the default): keep_lines must be >= 1, got -1"]
    assert "keep_lines" not in good.SchedMagics and c.SchedMagics.keep_lines == -1
    assert good.SchedMagics.list_schedulers.get_value([]) == ["local_docker"]
