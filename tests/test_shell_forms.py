"""Every common way of typing (and saving) a build command reads as the attempts a person sees.

Each form is one session of two attempts: the first fails because build isolation hides torch,
the second adds --no-build-isolation and succeeds. The first attempt must not vanish into the
second, and the resolution must name the flag, whatever the shell wrapped around the command.
"""

from __future__ import annotations

import pytest

from tests.conftest import analyse_text

ISOLATION = (
    "  Getting requirements to build wheel ... error\n      ModuleNotFoundError: No module named 'torch'\n"
    "ERROR: Failed to build 'flash-attn' when getting requirements to build wheel\n"
)
SUCCESS = "Successfully installed flash-attn-2.8.3\n"
CMD = "pip install flash-attn"
FIX = "pip install flash-attn --no-build-isolation"

# name -> the line(s) typed for an attempt, with {cmd} where the pip command goes
FORMS = {
    "2>&1": "$ {cmd} 2>&1\n",
    "tee": "$ {cmd} 2>&1 | tee build.log\n",
    "tee -a": "$ {cmd} 2>&1 | tee -a build.log\n",
    "&>": "$ {cmd} &> build.log; cat build.log\n",
    ">file 2>&1": "$ {cmd} > build.log 2>&1; cat build.log\n",
    "|&": "$ {cmd} |& tee build.log\n",
    "time": "$ time {cmd}\n",
    "sudo -E": "$ sudo -E {cmd}\n",
    "sudo -u": "$ sudo -u builder -E {cmd}\n",
    "env VAR=": "$ env MAX_JOBS=4 python -m {cmd}\n",
    "nohup &": "$ nohup {cmd} > build.log 2>&1 &\n",
    "python -m pip": "$ python3 -m {cmd}\n",
    "uv pip": "$ uv {cmd}\n",
    "conda run": "$ conda run -n ml {cmd}\n",
    "bash -c single": "$ bash -c '{cmd}'\n",
    "bash -lc double": '$ bash -lc "cd src && {cmd}"\n',
    "&& || chain": "$ cd src && {cmd} || echo failed\n",
    "; chain": "$ cd src; {cmd} && echo ok\n",
    "continuation": "$ {cmd} \\\n>     --verbose\n",
    "venv prompt + tee": "(venv) user@host:~/dir$ {cmd} 2>&1 | tee log.txt\n",
    "root prompt": "root@4f2a9c:/workspace# {cmd} 2>&1 | tee -a /tmp/build.log\n",
    "PowerShell Tee-Object": "PS C:\\Users\\me> {cmd} 2>&1 | Tee-Object -FilePath build.log\n",
    "cmd.exe": "C:\\Users\\me>{cmd} > build.log 2>&1\n",
    "set -x": "+ {cmd}\n",
    "set -x with tee": "+ {cmd}\n+ tee build.log\n",
    "Jupyter !": "!{cmd}\n",
    "Jupyter %": "%{cmd}\n",
    "Dockerfile RUN": "Step 3/5 : RUN {cmd}\n",
    "GitHub Actions redirect": "##[group]Run {cmd} 2>&1 | tee build.log\n{cmd} 2>&1 | tee build.log\n##[endgroup]\n",
    "GitLab CI": "\x1b[32;1m$ {cmd} 2>&1 | tee build.log\x1b[0;m\n",
    "unknown wrapper": "$ weirdtool --go {cmd}\n",
    "unknown syntax": "$ {cmd} <<<$(cat x) {{ok}}\n",
}


@pytest.mark.parametrize("form", list(FORMS), ids=list(FORMS))
def test_two_attempts_and_the_flag_resolves(form):
    shape = FORMS[form]
    first = shape.format(cmd=CMD)
    second = shape.format(cmd=FIX)
    if form == "continuation":
        second = "$ " + CMD + " \\\n>     --no-build-isolation\n"
    r = analyse_text(first + ISOLATION + second + SUCCESS).report
    assert [a.outcome for a in r.attempts] == ["failure", "success"], [a.command for a in r.attempts]
    assert all("flash-attn" in a.command for a in r.attempts)
    (incident,) = r.incidents
    assert incident.cause == "build_isolation_missing_torch" and incident.attempts == [1]
    assert incident.resolved_by is not None and incident.resolved_by.attempt == 2
    assert incident.resolved_by.kind == "isolation" and "--no-build-isolation" in incident.resolved_by.change
    assert r.status == "success"


def test_redirections_and_tee_do_not_count_as_changes():
    r = analyse_text(
        f"$ {CMD} 2>&1 | tee build.log\n{ISOLATION}$ {FIX} > build2.log 2>&1 | tee -a all.log\n{SUCCESS}"
    ).report
    assert r.incidents[0].resolved_by.other_changes == []


def test_wrappers_keep_their_variables_and_interpreter():
    r = analyse_text(f"$ sudo -E env MAX_JOBS=2 python3 -m {CMD}\n{ISOLATION}").report
    assert r.attempts[0].env == {"MAX_JOBS": "2"} and "sudo" in r.attempts[0].interpreter


def test_conda_run_names_the_environment():
    r = analyse_text(f"$ conda run -n ml {CMD}\n{ISOLATION}").report
    assert "ml" in r.attempts[0].interpreter


def test_echoed_commands_are_not_attempts():
    r = analyse_text(f"$ echo {CMD} >> notes.txt\n$ {FIX}\n{SUCCESS}").report
    assert [a.command for a in r.attempts] == [FIX]


def test_a_script_shown_with_cat_in_a_prompted_session_is_output_not_attempts():
    r = analyse_text(
        f"root@box:~$ cat build.sh\n{CMD} 2>&1 | tee -a build.log\n{FIX} 2>&1 | tee -a build.log\n"
        f"root@box:~$ bash -x build.sh\n+ {CMD}\n+ tee -a build.log\n{ISOLATION}+ {FIX}\n+ tee -a build.log\n{SUCCESS}"
    ).report
    assert [(a.command, a.outcome) for a in r.attempts] == [(CMD, "failure"), (FIX, "success")]


def test_what_is_still_broken_leads_when_the_earlier_causes_were_resolved():
    r = analyse_text(
        f"$ {CMD}\n{ISOLATION}$ {FIX}\n{SUCCESS}$ python -c 'import flash_attn'\n"
        'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        "ImportError: libc10.so: cannot open shared object file: No such file or directory\n"
    ).report
    assert r.status == "failure" and r.root_causes[0].id == "unknown"
    assert r.incidents[0].resolved_by.attempt == 2
