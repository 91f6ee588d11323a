"""A sweep's runs are recognised by name alone: ``<name>-<random id>-<index>``."""

from __future__ import annotations

from jupyter_sched.frontend.jobs.sweep_names import sweep_label, sweep_of


def test_sweep_names_are_recognised_by_their_random_id_and_index() -> None:
    assert sweep_of("train-sweep-b3k2x9q0d1xyz-007") == "train-sweep-b3k2x9q0d1xyz"
    assert sweep_of("fn-sweep-b3k2x9q0d1xyz-1234") == "fn-sweep-b3k2x9q0d1xyz"
    assert sweep_label("train-sweep-b3k2x9q0d1xyz") == "train-sweep"
    for name in ("train", "train-007", "train-b3k2x9q0d1xyz", "x-B3K2X9Q0D1XYZ-001", "a-3k2x9q0d1xyza-001", ""):
        assert sweep_of(name) is None, name
