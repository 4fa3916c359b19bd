"""evalkit.config: the demo study, and a clear error (file + key) for every kind of mistake."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.config import (
    ConfigError,
    PairwiseTask,
    RatingTask,
    TripletTask,
    check_pools,
    load_study,
    needed_reviews,
    open_study,
    relative_paths,
    study_version,
)
from evalkit.datasets import DatasetError, load_pools
from evalkit.tasks.base import APP_FOLDER, study_folder
from tests.helpers import CONFIG, ROOT, copy_demo, make_study
from tests.item_study import make_items_study


def test_demo_config_reproduces_the_cera_study() -> None:
    loaded = open_study(ROOT / "config.toml")
    study = loaded.study
    assert study.title and study.consent_text
    turing, pairwise, novelty = study.tasks
    assert isinstance(turing, TripletTask) and isinstance(pairwise, PairwiseTask) and isinstance(novelty, RatingTask)
    assert turing.sources == ("real", "cera", "heuristic") and turing.target == "real"
    assert sorted(turing.domains) == ["hotel", "laptop", "laptop", "restaurant", "restaurant"]
    assert sorted(pairwise.pairs) == sorted([("cera", "heuristic")] * 2 + [("cera", "real")] * 2
                                            + [("heuristic", "real")])
    assert {d for d in pairwise.domains} <= {"laptop", "restaurant", "hotel"}
    assert [m.id for m in novelty.metrics] == ["specificity", "relevance", "factuality", "rating_correctness",
                                                "graph_usefulness"]
    assert all(len(m.anchors) == 5 for m in novelty.metrics)
    assert novelty.familiarity is not None and novelty.familiarity.scale == (1, 2, 3, 4, 5)
    assert len(loaded.items["novelty"]) >= 8
    assert study.pool.as_kwargs() == {"max_sentences": 4, "min_sentences": 2, "min_chars": 120, "max_chars": 600}
    assert study.sources == ["real", "cera", "heuristic"]
    assert set(study.domains) == {"laptop", "restaurant", "hotel"}
    assert len(loaded.version) == 16


def test_paths_are_relative_to_the_config_and_database_can_be_overridden(tmp_path: Path) -> None:
    cfg = make_study(tmp_path)
    study = load_study(cfg)
    assert study.datasets == (tmp_path / "datasets").resolve()
    assert study.database == (tmp_path / "responses.sqlite").resolve()
    other = load_study(cfg, database=tmp_path / "x" / "db.sqlite")
    assert other.database == (tmp_path / "x" / "db.sqlite").resolve()


def test_version_changes_with_config_and_data(tmp_path: Path) -> None:
    cfg = make_study(tmp_path)
    v1 = study_version(load_study(cfg))
    assert study_version(load_study(cfg)) == v1
    cfg.write_text(cfg.read_text().replace("Synthetic study", "Synthetic study 2"))
    v2 = study_version(load_study(cfg))
    assert v2 != v1
    with open(tmp_path / "datasets" / "real-alphas.xml", "a") as fh:
        fh.write("<!-- changed -->\n")
    assert study_version(load_study(cfg)) != v2


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    cfg = make_study(tmp_path)
    text = CONFIG.replace("{triplet_domains}", '["alpha", "alpha", "beta", "beta"]')
    assert old in text, old
    cfg.write_text(text.replace(old, new, 1))
    return cfg


# (replace this, with this) -> the message must contain these strings
STATIC_ERRORS = [
    ('kind = "triplet"', 'kind = "ranking"', ["[[tasks]] #1", "'kind'", "'ranking'", "triplet"]),
    ("[pool]\n", "[pool]\nmax_sentences = -1\n", ["[pool]", "'max_sentences'", "at least 1"]),
    ("min_chars = 40", "min_chars = -5", ["[pool]", "'min_chars'", "at least 0"]),
    ("min_chars = 40", "min_chars = 700", ["[pool]", "'min_chars'", "greater than max_chars"]),
    ("[pool]\n", "[pool]\nmin_sentences = 5\n", ["'min_sentences'", "greater than max_sentences"]),
    ('items = "datasets/items.jsonl"', 'items = "datasets/nope.jsonl"', ["'rate'", "'items'", "nope.jsonl",
                                                                          "not found"]),
    ("[pool]\n", "[pool]\nmax_sentence = 3\n", ["[pool]", "'max_sentence'", "did you mean 'max_sentences'"]),
    ('title = "Synthetic study"\n', "", ["[study]", "'title'", "required"]),
    ('target = "real"', 'target = "human"', ["'turing'", "'target'", "'human'"]),
    ('domains = ["alpha", "beta", "alpha"]', 'domains = ["alpha"]', ["'pairs'", "'domains'", "one domain per pair"]),
    ('[["gen", "base"],', '[["gen", "gen"],', ["'pairs'", "itself"]),
    ('id = "pairs"', 'id = "turing"', ["task id 'turing'", "more than one task"]),
    ('seed = 99', 'seed = 99\ncompletion_url = "https://x.org/?c={cod}"', ["'completion_url'", "{code}"]),
    ('seed = 99', 'seed = 99\ncompletion_url = "ftp://x"', ["'completion_url'", "http"]),
    ('seed = 99', 'seed = -3', ["'seed'", "at least 0"]),
    ('anchors = ["bad", "poor", "fair", "good", "great"]', 'anchors = ["only"]', ["metric #1", "'anchors'"]),
    ('question = "How good is it?"\n', "", ["metric #1", "'question'", "required"]),
    ('sources = ["real", "gen", "base"]', 'sources = ["real", "real", "base"]', ["'sources'", "twice"]),
    ('response' if False else 'domains = ["alpha", "beta", "alpha"]',
     'domains = ["alpha", "beta", "alpha"]\nresponse = "stars"', ["'pairs'", "'response'", "'choice', 'slider'"]),
    ('datasets = "datasets"', 'datasets = "nowhere"', ["[study]", "'datasets'", "nowhere"]),
    ('min_chars = 40', 'min_chars = "40"', ["'min_chars'", "must be an integer"]),
    ('seed = 99', 'seed = 99\ndomain_names = "Alpha"', ["[study.domain_names]", "must be a table"]),
    ('seed = 99', 'seed = 99\n[study.domain_names]\nalpha = ""', ["[study.domain_names]", "'alpha'", "not be empty"]),
    ('seed = 99', 'seed = 99\n[study.domain_names]\nalpha = 3', ["[study.domain_names]", "'alpha'", "a string"]),
    ('seed = 99', 'seed = 99\n[study.domain_names]\nalpah = "Alpha"',
     ["[study.domain_names]", "'alpah'", "not a domain of any task", "did you mean 'alpha'", "alpha, beta"]),
]


@pytest.mark.parametrize(("old", "new", "needles"), STATIC_ERRORS)
def test_config_mistakes_name_the_file_and_the_key(tmp_path: Path, old: str, new: str, needles: list[str]) -> None:
    cfg = _broken(tmp_path, old, new)
    with pytest.raises(ConfigError) as err:
        open_study(cfg)
    message = str(err.value)
    assert message.startswith("config.toml:"), message
    for needle in needles:
        assert needle in message, (needle, message)


def test_not_toml_and_missing_file(tmp_path: Path) -> None:
    cfg = make_study(tmp_path)
    cfg.write_text("[study\ntitle = 1")
    with pytest.raises(ConfigError, match=r"config.toml: not valid TOML.*line 1"):
        load_study(cfg)
    with pytest.raises(ConfigError, match="study config not found"):
        load_study(tmp_path / "missing.toml")
    cfg.write_bytes(b'[study]\ntitle = "\xff"\n')
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        load_study(cfg)
    cfg.write_text('[study]\ntitle = "x"\n')
    with pytest.raises(ConfigError, match=r"top level: key 'tasks'"):
        load_study(cfg)


def test_source_without_dataset_file(tmp_path: Path) -> None:
    cfg = _broken(tmp_path, 'sources = ["real", "gen", "base"]', 'sources = ["real", "gen", "llm"]')
    with pytest.raises(ConfigError) as err:
        open_study(cfg)
    message = str(err.value)
    assert "'turing'" in message and "'llm'" in message and "llm-alphas.xml" in message
    assert "no dataset file names source 'llm'" in message


def test_source_without_file_for_one_domain(tmp_path: Path) -> None:
    cfg = make_study(tmp_path)
    (tmp_path / "datasets" / "gen-betas.xml").unlink()
    with pytest.raises(ConfigError, match=r"source 'gen' in domain 'beta' has no dataset file.*gen-betas.xml.*"
                                          r"files for \['alpha'\] only"):
        open_study(cfg)


def test_domain_list_longer_than_the_pool(tmp_path: Path) -> None:
    cfg = make_study(tmp_path, per_pool=30, triplet_domains=["alpha"] * 29)
    # alpha: turing needs 29 of each source, pairs need 1 more gen, 2 more base, 1 more real alpha
    with pytest.raises(ConfigError) as err:
        open_study(cfg)
    message = str(err.value)
    assert "domain 'alpha'" in message and "only 30 are eligible" in message
    assert "task 'turing': 29" in message and "task 'pairs'" in message


def test_filters_that_empty_the_pool_are_reported(tmp_path: Path) -> None:
    cfg = _broken(tmp_path, "min_chars = 40", "min_chars = 590")
    with pytest.raises(ConfigError, match=r"only 0 are eligible.*relax the filters"):
        open_study(cfg)


def test_broken_dataset_surfaces_as_dataset_error(tmp_path: Path) -> None:
    cfg = make_study(tmp_path)
    (tmp_path / "datasets" / "real-alphas.xml").write_text("<Reviews><Review rid='1'>")
    with pytest.raises(DatasetError, match=r"real-alphas.xml, line 1"):
        open_study(cfg)


def test_rating_min_items_larger_than_file(tmp_path: Path) -> None:
    cfg = _broken(tmp_path, 'items = "datasets/items.jsonl"', 'items = "datasets/items.jsonl"\nmin_items = 5')
    with pytest.raises(ConfigError, match=r"'min_items' asks for 5 items but items.jsonl holds only 3"):
        open_study(cfg)


def test_needed_reviews_and_check_pools(tmp_path: Path) -> None:
    cfg = make_study(tmp_path)
    study = load_study(cfg)
    need = needed_reviews(study)
    assert need[("gen", "alpha")] == {"turing": 2, "pairs": 1}
    assert need[("real", "beta")] == {"turing": 2, "pairs": 1}
    pools = load_pools(study.datasets, **study.pool.as_kwargs())
    check_pools(study, pools)  # no error
    pools[("gen", "alpha")] = pools[("gen", "alpha")][:2]
    with pytest.raises(ConfigError, match="3 different reviews of source 'gen' in domain 'alpha'"):
        check_pools(study, pools)


def test_copy_of_demo_is_valid(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    assert open_study(cfg).study.title == load_study(ROOT / "config.toml").title
    cfg.write_text(cfg.read_text().replace('consent = "consent.md"', 'consent = "missing.md"'))
    with pytest.raises(ConfigError, match=r"\[study\]: key 'consent': file 'missing.md' not found"):
        load_study(cfg)


def test_domain_names_default_to_the_capitalised_key(tmp_path: Path) -> None:
    study = load_study(make_study(tmp_path / "plain"))
    assert study.domain_label("alpha") == "Alpha" and study.domain_label("beta") == "Beta"
    cfg = _broken(tmp_path / "named", "seed = 99", 'seed = 99\n[study.domain_names]\nalpha = "  Laptops "')
    named = load_study(cfg)
    assert named.domain_label("alpha") == "Laptops" and named.domain_label("beta") == "Beta"
    assert open_study(ROOT / "config.toml").study.domain_label("laptop") == "Laptops"


def test_relative_paths_hide_server_folders_even_with_spaces() -> None:
    base = "/srv/my study"
    assert relative_paths("cannot open the database /srv/my study/data/x.sqlite: it is a folder", base) == (
        "cannot open the database data/x.sqlite: it is a folder")
    assert relative_paths("/srv/my study/datasets/a-bs.xml, line 3: bad", base) == "datasets/a-bs.xml, line 3: bad"
    assert relative_paths("folder /var/lib/evalkit/db.sqlite is not writable", base) == (
        "folder .../db.sqlite is not writable")
    assert relative_paths("see https://example.org/a/b, 1/2", base) == "see https://example.org/a/b, 1/2"


# ----------------------------------------------------------------------------- paths stay in the study folder


def _leaving(key: str, where: str, given: str, root: Path, target: Path) -> str:
    return (f"config.toml: {where}: key '{key}': the path {given!r} leaves the study folder {root} (it leads to "
            f"{target}); keep the study's files inside its folder, or give an absolute path to use a file outside "
            "it on purpose")


def _outside_study(tmp_path: Path) -> tuple[Path, Path]:
    """A study in ``tmp_path/study`` and, beside it, a file ``secret.md`` and a ``shared/`` copy of its data."""
    cfg = make_study(tmp_path / "study")
    (tmp_path / "secret.md").write_text("not for evaluators\n", encoding="utf-8")
    shutil.copytree(tmp_path / "study" / "datasets", tmp_path / "shared")
    return cfg, tmp_path / "study"


@pytest.mark.parametrize(("old", "new", "key", "where", "given", "target"), [
    ("seed = 99", 'seed = 99\nconsent = "../secret.md"', "consent", "[study]", "../secret.md", "secret.md"),
    ('datasets = "datasets"', 'datasets = "../shared"', "datasets", "[study]", "../shared", "shared"),
    ('database = "responses.sqlite"', 'database = "../responses.sqlite"', "database", "[study]",
     "../responses.sqlite", "responses.sqlite"),
    ('database = "responses.sqlite"', 'database = "sqlite:///../x/responses.sqlite"', "database", "[study]",
     "sqlite:///../x/responses.sqlite", "x/responses.sqlite"),
    ('items = "datasets/items.jsonl"', 'items = "datasets/../../shared/items.jsonl"', "items",
     "[[tasks]] #3 (id 'rate')", "datasets/../../shared/items.jsonl", "shared/items.jsonl"),
    ('target = "real"', 'target = "real"\nchecks = "../secret.md"', "checks", "[[tasks]] #1 (id 'turing')",
     "../secret.md", "secret.md"),
])
def test_a_relative_path_may_not_leave_the_study_folder(tmp_path: Path, old: str, new: str, key: str, where: str,
                                                         given: str, target: str) -> None:
    cfg, study = _outside_study(tmp_path)
    text = cfg.read_text()
    assert old in text, old
    cfg.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        load_study(cfg)
    assert str(err.value) == _leaving(key, where, given, study.resolve(), (tmp_path / target).resolve())


def test_a_symbolic_link_out_of_the_study_folder_is_refused_too(tmp_path: Path) -> None:
    cfg, study = _outside_study(tmp_path)
    shutil.rmtree(study / "datasets")
    (study / "datasets").symlink_to(tmp_path / "shared", target_is_directory=True)
    with pytest.raises(ConfigError) as err:
        load_study(cfg)
    assert str(err.value) == _leaving("datasets", "[study]", "datasets", study.resolve(),
                                      (tmp_path / "shared").resolve())


def test_a_relative_path_with_dots_that_stays_inside_is_fine(tmp_path: Path) -> None:
    cfg, study = _outside_study(tmp_path)
    cfg.write_text(cfg.read_text().replace('datasets = "datasets"', 'datasets = "datasets/../datasets"'))
    assert load_study(cfg).datasets == (study / "datasets").resolve()
    assert load_study(cfg).path_warnings == ()


def test_an_absolute_path_outside_the_study_folder_is_accepted_and_noted(tmp_path: Path) -> None:
    cfg, study = _outside_study(tmp_path)
    secret, shared = (tmp_path / "secret.md").resolve(), (tmp_path / "shared").resolve()
    inside = (study / "datasets" / "items.jsonl").resolve()
    cfg.write_text(cfg.read_text().replace("seed = 99", f'seed = 99\nconsent = "{secret}"')
                   .replace('datasets = "datasets"', f'datasets = "{shared}"')
                   .replace('items = "datasets/items.jsonl"', f'items = "{inside}"'))
    loaded = open_study(cfg)
    assert loaded.study.consent_text == "not for evaluators\n" and loaded.study.datasets == shared
    root = study.resolve()
    assert loaded.warnings() == [  # the items file is inside the study folder: nothing to say about it
        f"config.toml: [study]: key 'datasets': the absolute path '{shared}' is outside the study folder {root}",
        f"config.toml: [study]: key 'consent': the absolute path '{secret}' is outside the study folder {root}",
    ]


def test_the_studies_kept_with_the_app_share_its_folder(tmp_path: Path) -> None:
    """The examples (and the root config, and the test fixtures) read the repository's demo datasets/ and
    consent.md with ../../: the study folder of a config inside the evalkit folder is the evalkit folder."""
    assert ROOT.resolve() == APP_FOLDER
    assert study_folder(ROOT / "config.toml") == ROOT.resolve()
    assert study_folder(ROOT / "examples" / "cera" / "config.toml") == ROOT.resolve()
    assert study_folder(tmp_path / "study" / "config.toml") == (tmp_path / "study").resolve()
    cera = load_study(ROOT / "examples" / "cera" / "config.toml", database=tmp_path / "r.sqlite")
    assert cera.datasets == (ROOT / "datasets").resolve() and cera.path_warnings == ()


QUEUED = """
[[tasks]]
kind = "compare"
id = "help"
items = "items.jsonl"
systems = ["gpt4", "t5", "human"]
questions = 3
"""


@pytest.mark.parametrize("keys", ["judgements_per_item = 3\nclaim_minutes = 10\n",
                                  "claim_minutes = 10\njudgements_per_item = 3\n"])
def test_a_misspelt_judgments_per_item_beside_claim_minutes_gets_the_did_you_mean(tmp_path: Path, keys: str) -> None:
    cfg = make_items_study(tmp_path, QUEUED + keys)
    with pytest.raises(ConfigError) as err:
        load_study(cfg)
    message = str(err.value)
    assert message.startswith("config.toml: [[tasks]] #1 (id 'help'): key 'judgements_per_item': is not a known "
                              "setting (did you mean 'judgments_per_item'?); known keys here: "), message
    assert "claim_minutes, " in message  # in the list of known keys, not the subject of the message
    cfg.write_text(cfg.read_text().replace("judgements_per_item = 3\n", ""))  # really alone: its own message
    with pytest.raises(ConfigError) as err:
        load_study(cfg)
    assert str(err.value) == ("config.toml: [[tasks]] #1 (id 'help'): key 'claim_minutes': only applies to a task "
                              "with judgments_per_item")


def test_a_relative_path_into_a_hidden_folder_is_refused(tmp_path: Path) -> None:
    """A study's files are never hidden: .streamlit holds the server's secrets, .git its history (a config kept
    inside the evalkit folder may reach the whole folder, so this is what stops it at the secrets)."""
    cfg, study = _outside_study(tmp_path)
    (study / ".streamlit").mkdir()
    (study / ".streamlit" / "secrets.toml").write_text('results_password = "x"\n', encoding="utf-8")
    cfg.write_text(cfg.read_text().replace("seed = 99", 'seed = 99\nconsent = ".streamlit/secrets.toml"'))
    with pytest.raises(ConfigError, match=r"\[study\]: key 'consent': the path '.streamlit/secrets.toml' leads into "
                                          r"a hidden file or folder \(.streamlit/secrets.toml\)"):
        load_study(cfg)
    examples_help = ROOT / "examples" / "help" / "config.toml"
    text = examples_help.read_text()
    copy = ROOT / "examples" / "help" / "config-hidden-test.toml"
    try:  # the examples may reach the repository's datasets/, not its .streamlit/
        copy.write_text(text.replace('consent = "consent.md"', 'consent = "../../.streamlit/config.toml"'))
        with pytest.raises(ConfigError, match="leads into a hidden file or folder"):
            load_study(copy, database=tmp_path / "r.sqlite")
    finally:
        copy.unlink(missing_ok=True)


def test_the_database_override_is_used_instead_of_a_configured_path_outside_the_folder(tmp_path: Path) -> None:
    cfg, _ = _outside_study(tmp_path)
    cfg.write_text(cfg.read_text().replace('database = "responses.sqlite"', 'database = "../responses.sqlite"'))
    with pytest.raises(ConfigError, match="leaves the study folder"):
        load_study(cfg)
    assert load_study(cfg, database=tmp_path / "override.sqlite").database == (tmp_path / "override.sqlite")


def test_a_study_over_items_files_alone_needs_no_datasets_folder(tmp_path: Path) -> None:
    """The review pools' folder matters only to tasks that draw from them: an items study opens without it, and
    ``check`` says why it is not there; a pool study without it, or a folder the config names, is refused."""
    from evalkit.__main__ import main
    from tests.item_study import task_block

    config = make_items_study(tmp_path / "items", task_block("compare"))
    config.write_text(config.read_text().replace('datasets = "datasets"\n', ""), encoding="utf-8")
    shutil.rmtree(tmp_path / "items" / "datasets")
    loaded = open_study(config)
    assert not loaded.pools and loaded.study.tasks[0].kind == "compare"
    assert main(["check", str(config)]) == 0

    named = config.read_text().replace("[study]\n", '[study]\ndatasets = "reviews"\n', 1)
    config.write_text(named, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[study\]: key 'datasets': folder 'reviews' not found"):
        load_study(config)

    pools = make_study(tmp_path / "pools")
    text = pools.read_text().replace('datasets = "datasets"\n', "").replace("datasets/items.jsonl", "items.jsonl")
    pools.write_text(text, encoding="utf-8")
    (tmp_path / "pools" / "datasets" / "items.jsonl").rename(tmp_path / "pools" / "items.jsonl")
    shutil.rmtree(tmp_path / "pools" / "datasets")
    with pytest.raises(ConfigError, match=r"key 'datasets': folder 'datasets' not found .*tasks over the review pools"):
        load_study(pools)


def test_a_pair_of_one_source_with_itself_is_refused_also_when_spaces_differ(tmp_path: Path) -> None:
    """``["gen", "gen "]`` names one source twice (names are stripped): refused like ``["gen", "gen"]``, never
    planned as a pair (it once reached the balance audit, whose table then had a pair of one system)."""
    config = make_study(tmp_path)
    for pair in ('["gen", "gen"]', '["gen", "gen "]'):
        config.write_text(config.read_text().replace('["gen", "base"]', pair, 1), encoding="utf-8")
        with pytest.raises(ConfigError, match=r"entry #1 compares 'gen' with itself"):
            load_study(config)
        config.write_text(config.read_text().replace(pair, '["gen", "base"]', 1), encoding="utf-8")


def test_a_study_over_items_files_alone_is_versioned_by_its_own_files(tmp_path: Path) -> None:
    """Review files beside an items study (e.g. the demo's, when the study is copied into the checkout's
    datasets/) are not read, so they neither change its version nor can break it."""
    from tests.item_study import task_block

    config = make_items_study(tmp_path, task_block("compare"))
    before = open_study(config).version
    (tmp_path / "datasets" / "real-hotels.xml").write_text("not xml", encoding="utf-8")
    assert open_study(config).version == before
    (tmp_path / "items.jsonl").write_text((tmp_path / "items.jsonl").read_text() + "\n", encoding="utf-8")
    assert open_study(config).version != before  # its own files do
