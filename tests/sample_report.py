"""A report built by hand, so renderer tests do not depend on any parser or rule."""

from __future__ import annotations

from buildlog.report.schema import (
    Attempt,
    Evidence,
    Facts,
    FactValue,
    Incident,
    Report,
    Resolution,
    Risk,
    RootCause,
)  # fmt: skip


def sample_report() -> Report:
    return Report(
        source="build.log",
        lines=120,
        status="success",
        headline="The build succeeded after 2 attempts; 1 problem(s) resolved on the way.",
        root_causes=[
            RootCause(
                id="compiler_oom",
                title="The compiler ran out of memory during a parallel build",
                confidence=0.93,
                evidence=[Evidence(line=40, text="nvcc error   : 'cicc' died due to signal 9 (Kill signal)")],
                fix="Limit the parallel jobs:\n$ MAX_JOBS=20 pip install flash-attn --no-build-isolation",
                rule="compiler-killed",
                attempts=[1],
            )  # fmt: skip
        ],
        facts=Facts(
            nvcc=FactValue(value="12.8", line=3),
            torch=FactValue(value="2.9.1+cu128", line=5),
            torch_cuda=FactValue(value="12.8", line=5),
            ram_gb=FactValue(value="432", line=7),
        ),
        attempts=[
            Attempt(
                number=1,
                line=10,
                command="pip install flash-attn --no-build-isolation",
                outcome="failure",
                stage="compile",
                incidents=["I1"],
                end_line=60,
            ),
            Attempt(
                number=2,
                line=61,
                command="MAX_JOBS=20 pip install flash-attn --no-build-isolation",
                env={"MAX_JOBS": "20"},
                outcome="success",
                stage="install",
                end_line=120,
            ),
        ],  # fmt: skip
        incidents=[
            Incident(
                id="I1",
                cause="compiler_oom",
                attempts=[1],
                resolved_by=Resolution(attempt=2, change="MAX_JOBS=20 (unset before)", kind="jobs"),
            )
        ],  # fmt: skip
        risks=[
            Risk(
                id="arch_list_misses_gpu",
                title="TORCH_CUDA_ARCH_LIST does not cover the GPU",
                facts={"TORCH_CUDA_ARCH_LIST": "10.0", "GPU": "RTX PRO 6000 Blackwell (12.0)"},
                consequence='Kernels will fail at run time with "no kernel image is available".',
                fix='$ export TORCH_CUDA_ARCH_LIST="12.0"',
                severity="error",
            )
        ],  # fmt: skip
    )
