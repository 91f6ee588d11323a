"""How the built-ins' default images are chosen: environment, then a site's entry point, then the public
default. Each site here is a real installed distribution (a ``.dist-info`` on ``sys.path``), found by the
same ``importlib.metadata`` scan that finds an organisation's package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched.components import images
from jupyter_sched.components.dist import ddp
from jupyter_sched.components.images import PUBLIC_DEFAULTS, default_image
from jupyter_sched.components.utils import echo


def install_site(root: Path, module: str, source: str, entry_points: str) -> None:
    """A distribution ``mysite`` with module ``module`` and ``[jupyter_sched.images]`` entry points."""
    (root / f"{module}.py").write_text(source)
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[jupyter_sched.images]\n{entry_points}\n")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for var in images.ENV_VARS.values():
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_without_a_site_package_the_public_defaults_apply(clean_env: pytest.MonkeyPatch) -> None:
    empty = images.entrypoints.select("jupyter_sched.images.nothing-declares-this")
    assert default_image("python", empty) == "python:3.12-slim"
    assert default_image("torch", empty) == "pytorch/pytorch:latest" == PUBLIC_DEFAULTS["torch"]


def test_a_site_package_names_an_image_by_string_or_by_function(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    install_site(
        tmp_path, "mysite_images",
        "TORCH = 'registry.example.com/ml/torch:2'\n"
        "def python(version):\n    return f'registry.example.com/ml/python:for-{version}'\n",
        "torch = mysite_images:TORCH\npython = mysite_images:python",
    )  # fmt: skip
    clean_env.syspath_prepend(str(tmp_path))
    from jupyter_sched import __version__

    assert default_image("torch") == "registry.example.com/ml/torch:2"
    assert default_image("python") == f"registry.example.com/ml/python:for-{__version__}"


def test_the_environment_wins_over_the_site_package(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    install_site(tmp_path, "envsite_images", "TORCH = 'site/torch'\n", "torch = envsite_images:TORCH")
    clean_env.syspath_prepend(str(tmp_path))
    clean_env.setenv("JUPYTER_SCHED_TORCH_IMAGE", "mine/torch:dev")
    assert default_image("torch") == "mine/torch:dev"


def test_a_site_package_that_names_no_image_is_an_error_naming_the_package(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    install_site(tmp_path, "badsite_images", "TORCH = ''\n", "torch = badsite_images:TORCH")
    clean_env.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"badsite_images:TORCH .*not an image name.*JUPYTER_SCHED_TORCH_IMAGE"):
        default_image("torch")


def test_components_take_their_defaults_when_first_imported(tmp_path: Path) -> None:
    """In a fresh interpreter: ``dist.ddp`` gets the torch image and ``utils.echo`` the python one."""
    env = {**os.environ, "JUPYTER_SCHED_TORCH_IMAGE": "t/torch:1", "JUPYTER_SCHED_IMAGE": "p/python:1"}
    code = (
        "from jupyter_sched.components.dist import ddp, spmd\n"
        "from jupyter_sched.components.utils import echo\n"
        "print(ddp(script='a.py').roles[0].image, spmd(script='a.py').roles[0].image, echo().roles[0].image)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["t/torch:1", "p/python:1", "p/python:1"]


def test_this_process_defaults_are_what_the_components_use() -> None:
    assert ddp(script="a.py").roles[0].image == images.TORCH_IMAGE
    assert echo().roles[0].image == images.DEFAULT_IMAGE


@pytest.mark.torch
def test_ci_machines_default_to_the_torch_image_setup_builds() -> None:
    """scripts/setup/images.sh builds jupyter-sched/torch:local and installs images/site, whose entry
    point makes it dist.ddp's default, so TorchX's ``ddp(script=..., j="2x1")`` runs here unchanged."""
    if not os.environ.get("CI") and images.TORCH_IMAGE == PUBLIC_DEFAULTS["torch"]:
        pytest.skip("images/site is not installed (bash scripts/setup/images.sh torch installs it)")
    assert images.TORCH_IMAGE == "jupyter-sched/torch:local"
