"""python -m evalkit check | plan, as a researcher runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.__main__ import main
from evalkit.config import open_study
from evalkit.sampling import plan
from evalkit.store import open_store
from tests.helpers import ROOT, copy_demo, make_read_only, write_reviews


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "EVALKIT_DATABASE"}
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={**environment, **(env or {})})


def test_check_passes_on_the_demo_and_prints_pool_sizes() -> None:
    out = run("check")
    assert out.returncode == 0, out.stderr
    assert "OK: the study is valid." in out.stdout
    loaded = open_study(ROOT / "config.toml")
    for (source, domain), reviews in loaded.pools.items():
        line = next(ln for ln in out.stdout.splitlines() if ln.strip().startswith(source + " "))
        assert f"{len(reviews)} / " in line, (source, domain)
    assert "unmatched" in out.stdout


def test_check_fails_with_the_message_on_a_broken_config(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    cfg.write_text(cfg.read_text().replace('kind = "pairwise"', 'kind = "pairs"'))
    out = run("check", str(cfg))
    assert out.returncode == 1
    assert "config.toml: [[tasks]] #2" in out.stderr and "'kind'" in out.stderr and "Traceback" not in out.stderr


def test_check_fails_on_a_broken_dataset(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    (tmp_path / "datasets" / "cera-hotels.xml").write_text("<Reviews>\n<Review rid='1'>\n")
    out = run("check", str(cfg))
    assert out.returncode == 1
    assert "cera-hotels.xml, line" in out.stderr and "Traceback" not in out.stderr


def test_check_missing_config(tmp_path: Path) -> None:
    out = run("check", str(tmp_path / "nope.toml"))
    assert out.returncode == 1 and "study config not found" in out.stderr


def test_plan_prints_the_plan_as_json_with_sources() -> None:
    out = run("plan", "--seed", "42")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    loaded = open_study(ROOT / "config.toml")
    expected = [q.as_dict() for q in plan(loaded.study, loaded.pools, 42)]
    assert data["questions"] == expected and data["seed"] == 42 and data["version"] == loaded.version
    assert all("source" in t for q in data["questions"] for t in q["texts"])
    assert run("plan", "--seed", "42").stdout == out.stdout
    assert run("plan", "--seed", "43").stdout != out.stdout


def test_plan_bad_seed_is_a_usage_error() -> None:
    for bad in ("-1", "4294967296", "abc"):
        out = run("plan", "--seed", bad)
        assert out.returncode == 2 and "seed" in out.stderr


def test_check_opens_the_database_and_names_the_problem(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    cfg.write_text(re.sub(r"(?m)^database = .*$", 'database = "junk.sqlite"', cfg.read_text()))
    (tmp_path / "junk.sqlite").write_bytes(b"junk")
    out = run("check", str(cfg))
    assert out.returncode == 1, out.stdout
    assert f"cannot open the database {tmp_path / 'junk.sqlite'}: the file is not an SQLite database" in out.stderr
    assert (tmp_path / "junk.sqlite").read_bytes() == b"junk" and "Traceback" not in out.stderr
    (tmp_path / "junk.sqlite").unlink()
    (tmp_path / "junk.sqlite").mkdir()
    out = run("check", str(cfg))
    assert out.returncode == 1 and "it is a folder, not a database file" in out.stderr


def test_check_refuses_an_unknown_database_url_with_the_password_masked(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    url = "mysql://alice:s3cret@db.example.org/evalkit"
    cfg.write_text(re.sub(r"(?m)^database = .*$", f'database = "{url}"', cfg.read_text()))
    out = run("check", str(cfg))
    assert out.returncode == 1
    assert "key 'database'" in out.stderr and "not supported" in out.stderr and "s3cret" not in out.stderr
    assert not (tmp_path / "mysql:").exists()


def test_check_names_an_unreachable_postgresql_server_without_its_password(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    url = "postgresql://alice:s3cret@127.0.0.1:1/evalkit"  # nothing listens on port 1
    cfg.write_text(re.sub(r"(?m)^database = .*$", f'database = "{url}"', cfg.read_text()))
    out = run("check", str(cfg), "--samples", "0")
    assert out.returncode == 1
    assert "cannot open the database postgresql://alice:***@127.0.0.1:1/evalkit" in out.stderr
    assert "s3cret" not in out.stderr + out.stdout


def test_check_warns_loudly_about_unmatched_questions_and_fails_with_strict(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    cfg.write_text(cfg.read_text().replace("length_tolerance = 0.40", "length_tolerance = 0.0")
                   .replace("sentence_tolerance = 1 ", "sentence_tolerance = 0 "))
    out = run("check", str(cfg), "--samples", "20")
    assert out.returncode == 0, out.stderr
    assert "WARNING:" in out.stderr and "could not be length-matched" in out.stderr
    assert "with warnings" in out.stdout
    strict = run("check", str(cfg), "--samples", "20", "--strict")
    assert strict.returncode == 1 and "--strict" in strict.stderr
    demo = run("check", "--samples", "20", "--strict")  # the demo itself is well matched
    assert demo.returncode == 0 and "WARNING" not in demo.stderr, demo.stderr


def test_check_reports_a_file_whose_texts_are_all_empty(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    write_reviews(tmp_path / "datasets" / "cera-hotels.xml", [["", "  "], [""], ["   "]])
    out = run("check", str(cfg))
    assert out.returncode == 1
    assert "cera-hotels.xml has 3 reviews but every one of them has empty text" in out.stderr
    assert "relax the filters" not in out.stderr


def test_report_reads_a_read_only_database_and_refuses_a_broken_one(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    open_store(path).close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    undo = make_read_only(path)
    try:
        out = run("report", "--db", str(path))
        assert out.returncode == 0, out.stderr
    finally:
        undo()
    junk = tmp_path / "j.sqlite"
    junk.write_bytes(b"junk")
    out = run("report", "--db", str(junk))
    assert out.returncode == 1 and "not an SQLite database" in out.stderr and "Traceback" not in out.stderr


def _evil_db(tmp_path: Path) -> Path:
    """A database whose evaluator name, external id and comment are spreadsheet formulas with control
    characters (ESC sequences, NUL, an RTL override)."""
    import random

    from evalkit.config import study_summary
    from evalkit.survey import record_choice, record_item_rating

    loaded = open_study(ROOT / "config.toml")
    store = open_store(tmp_path / "evil.sqlite")
    store.register_study(loaded.version, study_summary(loaded.study))
    rng = random.Random(1)
    task = loaded.study.task("novelty")
    for name, ext in (('=HYPERLINK("http://x","click")\x1b]0;pwned\x07\x1b[2J', "@SUM(1+1)"),
                      ("Ann\u202eevil\x00", "-2+3")):
        session = store.create_session(study_version=loaded.version, evaluator_name=name, external_id=ext)
        for q in plan(loaded.study, loaded.pools, session.seed):
            record_choice(store, session, q, rng.choice(q.labels), 1000)
        scores = {m.id: rng.randint(1, 5) for m in [task.familiarity, *task.metrics]}
        record_item_rating(store, session, task, 0, loaded.items["novelty"][0].id, scores,
                           "+cmd|' /C calc'!A0 \x1b[31mred", 4000, loaded.items["novelty"])
    store.close()
    return tmp_path / "evil.sqlite"


def test_export_to_stdout_neutralises_formulas_and_control_characters(tmp_path: Path) -> None:
    import csv
    import io

    db = _evil_db(tmp_path)
    for what in ("evaluations", "ratings"):
        out = run("export", what, "--db", str(db), "-o", "-")
        assert out.returncode == 0, out.stderr
        assert not any(ch in out.stdout for ch in "\x1b\x07\x00\u202e"), what  # nothing reaches the terminal
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        names = {r["evaluatorName"] for r in rows}
        assert names == {"'=HYPERLINK(\"http://x\",\"click\")]0;pwned[2J", "Annevil"}, names
        assert {r["externalId"] for r in rows} == {"'@SUM(1+1)", "'-2+3"}
        for r in rows:
            for cell in r.values():
                if cell and cell[0] in "=+-@\t\r":
                    float(cell)  # only numbers may start like a formula
    ratings = list(csv.DictReader(io.StringIO(run("export", "ratings", "--db", str(db)).stdout)))
    assert {r["itemComment"] for r in ratings} == {"'+cmd|' /C calc'!A0 [31mred"}
    assert all(r["score"].isdigit() for r in ratings) and "comment" not in {r["metric"] for r in ratings}
    written = tmp_path / "ev.csv"
    assert run("export", "evaluations", "--db", str(db), "-o", str(written)).returncode == 0
    assert written.read_text(encoding="utf-8") == run("export", "evaluations", "--db", str(db)).stdout


def test_report_to_stdout_has_no_control_characters(tmp_path: Path) -> None:
    db = _evil_db(tmp_path)
    for fmt in ("markdown", "latex", "csv"):
        out = run("report", "--db", str(db), "--format", fmt)
        assert out.returncode == 0, out.stderr
        assert not any(ch in out.stdout for ch in "\x1b\x07\x00\u202e"), fmt
    md = run("report", "--db", str(db)).stdout
    assert "2 ratings of 1 item" in md and "needs items rated by two or more evaluators" not in md


def test_check_uses_evalkit_database_as_the_app_does(tmp_path: Path) -> None:
    out = run("check", "--samples", "0", env={"EVALKIT_DATABASE": "mysql://u:secretpw@h/db"})
    assert out.returncode == 1 and "EVALKIT_DATABASE" in out.stderr and "secretpw" not in out.stderr
    folder = tmp_path / "db.sqlite"
    folder.mkdir()
    out = run("check", "--samples", "0", env={"EVALKIT_DATABASE": str(folder)})
    assert out.returncode == 1 and "it is a folder" in out.stderr


def test_check_uses_the_database_url_secret_as_the_app_does(tmp_path: Path) -> None:
    secrets = tmp_path / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir()
    secrets.write_text('database_url = "mysql://u:secretpw@h/db"\n')
    path = {"PYTHONPATH": str(ROOT)}  # evalkit from this checkout, run from another folder
    out = run("check", str(ROOT / "config.toml"), "--samples", "0", cwd=tmp_path, env=path)
    assert out.returncode == 1 and "the database_url secret" in out.stderr and "secretpw" not in out.stderr
    secrets.write_text(f'database_url = "sqlite:///{tmp_path / "from-secret.sqlite"}"\n')
    out = run("check", str(ROOT / "config.toml"), "--samples", "0", cwd=tmp_path, env=path)
    assert out.returncode == 0, out.stderr
    assert f"Database: {tmp_path / 'from-secret.sqlite'}: does not exist yet" in out.stdout
    out = run("check", str(ROOT / "config.toml"), "--samples", "0", cwd=tmp_path,
              env={**path, "EVALKIT_DATABASE": str(tmp_path / "env.sqlite")})  # the environment wins, as in the app
    assert f"Database: {tmp_path / 'env.sqlite'}" in out.stdout


REPLIES = """
[study]
title = "Replies"
datasets = "."
database = "responses.sqlite"
{consent}
[[tasks]]
kind = "compare"
id = "replies"
items = "items.jsonl"
systems = ["gpt4", "t5"]
questions = 2
"""


def replies_study(folder: Path, r17: dict, *, consent: str = 'consent = "consent.md"') -> Path:
    """A compare study of gpt4 and t5 whose item r17 (line 2) is ``r17`` (with a consent text: a study without
    one gets a warning of its own)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "consent.md").write_text("You agree to take part.\n", encoding="utf-8")
    lines = [{"id": "r16", "input": "Hi.", "outputs": {"gpt4": "A.", "t5": "B."}}, {"id": "r17", "input": "Hi.", **r17},
             *({"id": f"r{i}", "input": "Hi.", "outputs": {"gpt4": "A.", "t5": "B."}} for i in (18, 19, 20))]
    (folder / "items.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    cfg = folder / "config.toml"
    cfg.write_text(REPLIES.replace("{consent}", consent), encoding="utf-8")
    return cfg


MISSING_T5 = ("WARNING: items.jsonl, line 2 (item 'r17'): key 'outputs': no output for system 't5' (listed in task "
              "'replies')")


def check(capsys: pytest.CaptureFixture[str], cfg: Path, *options: str) -> tuple[int, str, str]:
    """``python -m evalkit check cfg --samples 3 ...`` in this process: (exit status, stdout, stderr)."""
    status = main(["check", str(cfg), "--samples", "3", *options])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_check_warns_about_an_item_lacking_a_listed_systems_output(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """With or without metrics for the missing system, the warning names the file, line, item, key, system and
    task; --strict makes it an error (exit 1)."""
    for name, r17 in (("plain", {"outputs": {"gpt4": "A."}}),
                      ("metrics", {"outputs": {"gpt4": "A."}, "metrics": {"gpt4": {"bleu": 2}, "t5": {"bleu": 3}}})):
        cfg = replies_study(tmp_path / name, r17)
        status, out, err = check(capsys, cfg)
        assert status == 0, err
        assert MISSING_T5 in err.splitlines(), err
        assert err.count("WARNING") == 1
        assert "OK: the study is valid. (with warnings, see above)" in out
        status, out, err = check(capsys, cfg, "--strict")
        assert status == 1 and MISSING_T5 in err.splitlines()
        assert "FAILED: the study is valid but has warnings, and --strict was given." in err
    whole = replies_study(tmp_path / "whole", {"outputs": {"gpt4": "A.", "t5": "B."}})
    status, out, err = check(capsys, whole, "--strict")
    assert status == 0 and "WARNING" not in err, err


def test_check_warns_about_texts_too_long_for_a_question(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An output over 100,000 characters (issue 25, section 3): a warning naming the file, line, item and key;
    an error under --strict."""
    huge = "word " * 20_001  # 100,005 characters
    cfg = replies_study(tmp_path / "long", {"outputs": {"gpt4": "A.", "t5": huge}})
    status, _, err = check(capsys, cfg)
    assert status == 0, err
    assert ("WARNING: items.jsonl, line 2 (item 'r17'): key 'outputs': system 't5': 100,005 characters, more than "
            "100,000: a question this long is slow to load and hard to read") in err.splitlines(), err
    assert check(capsys, cfg, "--strict")[0] == 1


def test_check_names_each_absolute_path_outside_the_study_folder(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "consent.md").write_text("Consent.\n", encoding="utf-8")
    consent = (tmp_path / "consent.md").resolve()
    cfg = replies_study(tmp_path / "study", {"outputs": {"gpt4": "A.", "t5": "B."}}, consent=f'consent = "{consent}"')
    status, _, err = check(capsys, cfg)
    assert status == 0, err
    warning = (f"WARNING: config.toml: [study]: key 'consent': the absolute path '{consent}' is outside the study "
               f"folder {(tmp_path / 'study').resolve()}")
    assert warning in err.splitlines(), err
    assert check(capsys, cfg, "--strict")[0] == 1
    cfg.write_text(cfg.read_text().replace(str(consent), "../consent.md"))
    refused = run("check", str(cfg), "--samples", "3")  # as a researcher runs it: the message, no traceback
    assert refused.returncode == 1
    assert refused.stderr == (f"error: config.toml: [study]: key 'consent': the path '../consent.md' leaves the study "
                              f"folder {(tmp_path / 'study').resolve()} (it leads to {consent}); keep the study's "
                              "files inside its folder, or give an absolute path to use a file outside it on "
                              "purpose\n")


def test_every_command_and_argument_has_help() -> None:
    """The command-line reference is generated from the parser (docs/hooks/reference.py): an argument without help
    would be a bare name there."""
    import argparse

    from evalkit.__main__ import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helped = {c.dest: c.help for c in subparsers._choices_actions}
    bare = [f"{name} {action.dest}" for name, command in subparsers.choices.items() for action in command._actions
            if not isinstance(action, argparse._HelpAction) and not action.help]
    assert not bare, f"arguments without help: {bare}"
    assert all(helped.get(name) for name in subparsers.choices), helped
