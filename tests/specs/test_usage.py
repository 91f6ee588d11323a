"""The usage data model: the OOM message every backend gives, byte formatting, the JSON of ``top``."""

from __future__ import annotations

from jupyter_sched.specs import AppState, AppStatus, ReplicaStatus, RoleStatus
from jupyter_sched.specs.status.usage import GpuSample, UsageSample, UsageTotals, format_bytes, oom_message

MIB = 1024 * 1024


def test_oom_message_format() -> None:
    assert oom_message(64 * MIB, int(63.9 * MIB)) == "killed: out of memory (limit 64 MiB, peak 63.9 MiB)"
    assert oom_message(64 * MIB, None) == "killed: out of memory (limit 64 MiB)"
    assert oom_message(None, None) == "killed: out of memory"
    assert oom_message(64 * MIB, 3 * MIB, peak_unknown=True) == "killed: out of memory (limit 64 MiB, peak unknown)"


def test_totals_with_an_unknown_peak_say_so() -> None:
    known = UsageTotals(60 * MIB, 0.07, 3.29, 64 * MIB)
    assert known.format() == "peak 60 MiB of 64 MiB, cpu 0.07 s, wall 3.29 s"
    unknown = UsageTotals(0, 0.04, 2.77, 64 * MIB)
    assert unknown.format() == "peak unknown, limit 64 MiB, cpu 0.04 s, wall 2.77 s"
    assert unknown.to_json()["peak_rss_bytes"] is None and UsageTotals.from_json(unknown.to_json()) == unknown


def test_format_bytes() -> None:
    assert [format_bytes(n) for n in (0, 1023, 1024, 1536 * 1024, 64 * MIB, 3 * 1024 * MIB // 2, None)] == [
        "0 B",
        "1023 B",
        "1 KiB",
        "1.5 MiB",
        "64 MiB",
        "1.5 GiB",
        "-",
    ]


def test_top_json_fields_and_gpus_only_when_present() -> None:
    s = UsageSample("trainer", 1, 97.25, 12.3456, 200 * MIB, 210 * MIB, None)
    assert s.to_json() == {
        "role": "trainer",
        "replica": 1,
        "cpu_percent": 97.2,
        "cpu_seconds": 12.346,
        "rss_bytes": 200 * MIB,
        "peak_rss_bytes": 210 * MIB,
        "mem_limit_bytes": None,
    }
    gpu = GpuSample(0, "NVIDIA A100-SXM4-40GB", 87.0, 1024 * MIB, 40960 * MIB)
    with_gpu = UsageSample("trainer", 0, 1.0, 1.0, 1, 1, 64 * MIB, gpus=[gpu])
    assert with_gpu.to_json()["gpus"] == [
        {
            "index": 0,
            "name": "NVIDIA A100-SXM4-40GB",
            "utilization_percent": 87.0,
            "memory_used_bytes": 1024 * MIB,
            "memory_total_bytes": 40960 * MIB,
        }
    ]
    assert with_gpu.mem_fraction == 1 / (64 * MIB) and s.mem_fraction is None


def test_totals_round_trip_and_show_in_status_format_json_and_repr() -> None:
    totals = UsageTotals(200 * MIB, 3.21, 4.02, 256 * MIB)
    assert UsageTotals.from_json(totals.to_json()) == totals and UsageTotals.from_json(None) is None
    status = AppStatus(AppState.SUCCEEDED, roles=[RoleStatus("w", [
        ReplicaStatus(0, AppState.SUCCEEDED, "w", "localhost", exit_code=0, usage=totals),
        ReplicaStatus(1, AppState.SUCCEEDED, "w", "localhost", exit_code=0),
    ])])  # fmt: skip
    assert "*w[0]:SUCCEEDED (exitcode: 0) (peak 200 MiB of 256 MiB, cpu 3.21 s, wall 4.02 s)" in status.format()
    assert " w[1]:SUCCEEDED (exitcode: 0)\n" in status.format()
    assert status.to_json()["roles"][0]["replicas"][0]["usage"]["peak_rss_bytes"] == 200 * MIB
    assert status.to_json()["roles"][0]["replicas"][1]["usage"] is None
    text = repr(status)  # YAML: usage only where measured, so the other replica reads as TorchX's
    assert "usage:\n        cpu_seconds: 3.21\n" in text and text.count("usage:") == 1
