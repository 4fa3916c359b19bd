"""Every key of a study's ``config.toml``, described: the data behind the configuration reference.

:data:`SECTIONS` lists the config's tables in the order a study is written (the top level, ``[study]`` and its
sub-tables, ``[pool]``, ``[bias]``, the keys every ``[[tasks]]`` block takes, then each kind's own keys and the
tables nested in a task); each :class:`Section` holds its :class:`Key` entries: type, default (or
:data:`REQUIRED`), the allowed values where there are few, and a description a researcher understands.

The parsing code (:mod:`evalkit.config`, :mod:`evalkit.checks`, :mod:`evalkit.tasks`) stays the authority on
what is valid; ``tests/test_config_keys.py`` fails when a key the code reads is not described here, or a key
described here is no longer read. ``docs/hooks/reference.py`` renders this module as the documentation's
configuration reference. Pure data: standard library only, imports nothing from evalkit.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CHECK_KINDS", "ITEMS_KINDS", "KINDS", "REQUIRED", "SECTIONS", "Key", "Section", "applies", "section"]

#: the default of a key that must be given
REQUIRED = "required"
#: the task kinds, as ``kind = "..."`` names them
KINDS = ("triplet", "pairwise", "rating", "compare", "score", "spans", "rank", "realfake", "form")
#: the kinds whose questions come from an items file and may deal them from the shared queue
ITEMS_KINDS = ("compare", "score", "spans", "rank")
#: the kinds that take tutorials and attention checks
CHECK_KINDS = ("compare", "score", "spans", "rank", "realfake", "triplet", "pairwise")


@dataclass(frozen=True)
class Key:
    """One key of a table: its TOML type, its default (:data:`REQUIRED` when it must be given), the values it
    takes when there are few, and what it does."""

    name: str
    type: str
    default: str
    description: str
    allowed: tuple[str, ...] = ()
    #: ``name`` stands for any key the researcher chooses (``<domain>``): every key of the table is one
    placeholder: bool = False
    #: the id of the section describing this key's own table (a key whose value is a table)
    see: str = ""


@dataclass(frozen=True)
class Section:
    """The keys of one table, or of one part of a table (a kind's own keys of a ``[[tasks]]`` block).

    ``table`` is the table as written in TOML (``"[study.session]"``, ``"[[tasks]]"``; ``""`` for the top
    level). ``when`` limits the section to the tables whose key ``when[0]`` has one of the values ``when[1]``
    (``("kind", ("score",))``); None: every table of ``table``. ``example`` is a short TOML snippet."""

    id: str
    table: str
    title: str
    intro: str
    keys: tuple[Key, ...]
    when: tuple[str, tuple[str, ...]] | None = None
    example: str = ""


def applies(sec: Section, table: str, value_of: dict[str, object]) -> bool:
    """Whether ``sec`` describes keys of a table written ``table`` whose keys hold ``value_of``."""
    if sec.table != table:
        return False
    return sec.when is None or value_of.get(sec.when[0]) in sec.when[1]


def _str(*values: str) -> tuple[str, ...]:
    return values


# ----------------------------------------------------------------------------- keys shared by several sections

_QUESTION = "The question shown above the answer."
_SELECTION = Key(
    "selection", "string", '"per-evaluator"',
    "`per-evaluator`: each evaluator's reviews are drawn from their own seed. `shared`: the reviews and their "
    "display texts are drawn once from the study's `seed`, so everyone judges the same ones, each in their own "
    "order and positions (needed for agreement statistics).",
    allowed=_str("per-evaluator", "shared"))
_ORDER = Key(
    "order", "string", '"shuffled"',
    "The order of the questions: shuffled per evaluator, or `fixed` in the order of `domains`.",
    allowed=_str("shuffled", "fixed"))
_INPUT_LABEL = Key(
    "input_label", "string (at most 40 characters)", '"Input"',
    "The heading of the input's card, e.g. \"News text\".")


def _output_label(default: str) -> Key:
    return Key("output_label", "string (at most 40 characters)", default,
               "What the outputs are called, e.g. \"Headline\": their cards (\"Headline A\"), the options under "
               "them, the messages and the default `question` use it.")


# ----------------------------------------------------------------------------- the sections

SECTIONS: tuple[Section, ...] = (
    Section(
        "top", "", "The top level",
        "A config file holds these tables; unknown keys anywhere are errors with a did-you-mean hint, so a "
        "misspelt key never silently runs a different study. Relative paths are relative to the config file "
        "and must stay in the study folder.",
        (
            Key("study", "table", REQUIRED, "The study itself: its title, where its data and answers are kept, "
                "how evaluators start and finish.", see="study"),
            Key("pool", "table", "the defaults", "Which reviews of the review pools are eligible.", see="pool"),
            Key("bias", "table", "the defaults", "Length matching and length normalisation of the reviews "
                "shown together.", see="bias"),
            Key("tasks", "array of tables", REQUIRED, "The study's blocks, at least one, run in the order "
                "written.", see="tasks"),
        )),
    Section(
        "study", "[study]", "The study",
        "What the study is called, where its data and its answers live, who may take part and how a session "
        "ends.",
        (
            Key("title", "string", REQUIRED, "The study's name, shown at the top of every page."),
            Key("description", "string", '""', "One line shown under the title."),
            Key("datasets", "string (path)", '"datasets"',
                "The folder of review files (`<source>-<domain>s.xml`, SemEval XML) the review-pool kinds "
                "(triplet, pairwise, realfake with `sources`) draw from. A folder named here must exist; the "
                "default one only when a task draws from the pools."),
            Key("database", "string (path or URL)", '"data/responses.sqlite"',
                "Where the answers are stored: a SQLite file (or `sqlite:///path`), created on first use, or a "
                "`postgresql://` URL. The environment variable `EVALKIT_DATABASE` overrides it."),
            Key("seed", "integer, 0 to 4294967295", "0",
                "The study-level seed: the reviews of `selection = \"shared\"` tasks and the order of the "
                "shared queues are drawn from it."),
            Key("estimated_minutes", "integer ≥ 1", "unset", "How long the study takes, shown on the consent "
                "screen."),
            Key("consent", "string (path)", "unset",
                "A Markdown file shown on the consent screen (trusted: written by the researcher)."),
            Key("record_user_agent", "boolean", "false",
                "Store each session's browser User-Agent. Say so in the consent text if you turn it on."),
            Key("participants", "string", '"open"',
                "Who may start a session: `open`, anyone with the study's address; `invited`, only the private "
                "links made by `evalkit invite`.",
                allowed=_str("open", "invited")),
            Key("positions", "string", "unset",
                "Where a question's texts are placed, for sessions with an arrival number: `rotation`, a "
                "Williams design keyed by arrival order; `shuffle`, an independent draw per evaluator. Unset: "
                "rotation for the kinds over items files, shuffle for the review pools.",
                allowed=_str("rotation", "shuffle")),
            Key("blind", "boolean", "true",
                "`false` shows each output's system name in its card heading (\"Response A · gpt4\"), in every "
                "task over an items file (compare, score, spans, rank, realfake; Pearmut's `show_model_names`). "
                "Judgments may then follow the names: `evalkit check` warns that the study is not blind. `true`: "
                "system names never reach the browser."),
            Key("media", "string (path)", '"media"',
                "The folder of the items' images, audio clips and videos (a media value's `path`, relative to "
                "the config's folder, must lead into it; `..` and symbolic links that leave it are refused). "
                "See [Images, audio and video](../how-to/media.md)."),
            Key("allow_remote_media", "boolean", "false",
                "Allow media values with a `url` (http or https): each evaluator's browser then fetches the file "
                "from that host, which learns the evaluator's address; say so in the consent text. `evalkit "
                "check` lists the hosts. `false`: a remote media value is an error."),
            Key("completion_url", "string (http or https URL)", '""',
                "Where the done screen sends the evaluator, e.g. Prolific's completion link. The only "
                "placeholder allowed is `{code}`, replaced by the completion code. Empty: no redirect."),
            Key("completion_code_pass", "string (1-64 letters, digits, _ or -)", '""',
                "The code shown to evaluators who passed the attention checks. Empty: a code per session."),
            Key("completion_code_fail", "string (1-64 letters, digits, _ or -)", '""',
                "The code shown to evaluators who failed them; must differ from `completion_code_pass`."),
            Key("completion_code_full", "string (1-64 letters, digits, _ or -)", '""',
                "The code of evaluators who got no work because the study's queues were full (a platform's "
                "screen-out code). Empty: no code; the done screen asks them to return the study."),
            Key("redirect_seconds", "integer, 0 to 600", "5",
                "The done screen goes to `completion_url` after this many seconds; 0 never redirects by "
                "itself."),
            Key("done_message", "string (Markdown)", '""',
                "The done screen's text in place of the default thanks (trusted: written by the researcher), "
                "above the completion code. Placeholders: `${TOKEN}` or `{code}`, the completion code; "
                "`${USER_ID}` or `{participant}`, the invited participant's id, else the platform's participant "
                "id, else empty (Pearmut's `instructions_goodbye`). Any other `${...}` is an error."),
            Key("quality", "table", "the defaults", "When an evaluator fails the attention checks.",
                see="study.quality"),
            Key("session", "table", "no limits", "Limits on a session's length, and breaks.",
                see="study.session"),
            Key("domain_names", "table", "the domains capitalised", "The names evaluators see for the domains.",
                see="study.domain_names"),
        ),
        example='[study]\ntitle = "Real or generated?"\ndatasets = "datasets"\ndatabase = "data/responses.sqlite"\n'
                'seed = 20240607\nestimated_minutes = 12\nconsent = "consent.md"\n'
                'completion_url = "https://app.prolific.com/submissions/complete?cc={code}"\n'
                'completion_code_pass = "C1A2B3"\ncompletion_code_fail = "C9FAIL"\n'),
    Section(
        "study.domain_names", "[study.domain_names]", "Domain names",
        "How each domain of the review pools is named to evaluators (\"Topic: Laptops\").",
        (
            Key("<domain>", "string", "the domain capitalised",
                "The name shown for this domain. A key that is no task's domain is an error naming it.",
                placeholder=True),
        ),
        example='[study.domain_names]\nlaptop = "Laptops"\nhotel = "Hotels"\n'),
    Section(
        "study.quality", "[study.quality]", "Attention-check quality",
        "When a session counts as failed.",
        (
            Key("max_failed_checks", "integer ≥ 0, or a number strictly between 0 and 1", "0",
                "An evaluator fails when more of their attention checks were answered wrong the first time than "
                "this: a count (`1`: two wrong fail), or a proportion of the attention checks they answered (`0.2`: "
                "of 5 checks, one wrong passes and two fail). `1.0`, a negative number or a string is an error "
                "(write a count as an integer). Failed evaluators get `completion_code_fail` and are left out of "
                "the statistics by default (the results page and `evalkit report` apply the same rule)."),
        ),
        example="[study.quality]\nmax_failed_checks = 0      # or a proportion: 0.2 = more than a fifth wrong fails\n"),
    Section(
        "study.session", "[study.session]", "Session limits",
        "Optional limits against fatigue. A *judgment* is a stored answer (attention checks included) or a "
        "rated item; practice questions and forms never count.",
        (
            Key("max_minutes", "integer ≥ 1", "no limit",
                "A session that has run this long from its start (breaks included) ends at its next question."),
            Key("questions", "integer ≥ 1", "no limit", "At most this many judgments per session."),
            Key("pause_every", "integer ≥ 1", "no breaks",
                "A \"Take a short break\" screen after every this many judgments."),
            Key("abandon_minutes", "integer ≥ 0", "60",
                "A session with nothing recorded this long after its start is marked abandoned: its queue claims "
                "and its arrival number go to others. 0: never."),
        ),
        example="[study.session]\nmax_minutes = 30\nquestions = 40\npause_every = 10\n"),
    Section(
        "pool", "[pool]", "Review pools",
        "Which reviews of the dataset files are eligible to be shown.",
        (
            Key("max_sentences", "integer ≥ 1", "4", "Reviews are cut to their first this many sentences."),
            Key("min_sentences", "integer ≥ 0", "2", "Reviews with fewer sentences are not eligible."),
            Key("min_chars", "integer ≥ 0", "120",
                "The shortest eligible review, in characters of its text after the cut (inclusive)."),
            Key("max_chars", "integer ≥ 1", "600", "The longest eligible review, likewise."),
        )),
    Section(
        "bias", "[bias]", "Bias controls",
        "Length matching when the reviews of a question are chosen, and length normalisation when they are "
        "shown.",
        (
            Key("length_tolerance", "number, 0 to 10", "0.4",
                "The other reviews of a question are within ± this share of the first one's characters (0.4: "
                "±40 %)."),
            Key("sentence_tolerance", "integer ≥ 0", "1", "... and within ± this many sentences."),
            Key("truncate", "[low, high] (numbers, 0 < low ≤ high ≤ 1)", "[0.85, 1.0]",
                "Every text of a question is cut, at a word, to a length drawn from low to high times the "
                "shortest text's length."),
        ),
        example="[bias]\nlength_tolerance = 0.40\nsentence_tolerance = 1\ntruncate = [0.85, 1.0]\n"),
    Section(
        "tasks", "[[tasks]]", "Every task",
        "Each `[[tasks]]` block is one task, run in the order written. Every kind takes these keys; the "
        "sections below list each kind's own.",
        (
            Key("kind", "string", REQUIRED, "The kind of task; it decides which other keys the block takes.",
                allowed=KINDS),
            Key("id", "string (letters, digits, _, - or .)", REQUIRED,
                "The task's id, stored with every answer; unique in the study."),
            Key("title", "string", "the id, capitalised", "The task's heading."),
            Key("instructions", "string (Markdown)", '""', "Shown before the task's first question."),
        )),
    Section(
        "tasks.triplet", "[[tasks]]", "Triplet tasks",
        "Which of N texts (one per source, same domain, drawn from the review pools) comes from the target "
        "source?",
        (
            Key("sources", "list of strings (2 to 26)", REQUIRED,
                "The sources compared: every question shows one text of each."),
            Key("target", "string", REQUIRED, "The source evaluators must spot; one of `sources`."),
            Key("domains", "list of strings", REQUIRED,
                "One question per entry, showing texts of that domain (repeat a domain for more questions)."),
            Key("question", "string", '"Which review was written by a <target> source?"', _QUESTION),
            _SELECTION,
            _ORDER,
        ),
        when=("kind", ("triplet",)),
        example='[[tasks]]\nkind = "triplet"\nid = "turing"\ntitle = "Spot the real review"\n'
                'sources = ["real", "cera", "heuristic"]\ntarget = "real"\n'
                'domains = ["laptop", "laptop", "restaurant", "hotel"]\n'),
    Section(
        "tasks.pairwise", "[[tasks]]", "Pairwise tasks",
        "Which of two texts (two sources, same domain, drawn from the review pools) is better?",
        (
            Key("pairs", "list of [source, source] pairs", REQUIRED,
                "One question per pair: the two sources whose texts are shown side by side."),
            Key("domains", "list of strings", REQUIRED, "The domain of each pair's question, one per pair."),
            Key("question", "string", '"Which review sounds more natural and realistic?"', _QUESTION),
            Key("response", "string", '"choice"',
                "`choice`: A or B. `slider`: the HELP slider from -100 to 100, then accept or reject both texts.",
                allowed=_str("choice", "slider")),
            _SELECTION,
            _ORDER,
        ),
        when=("kind", ("pairwise",)),
        example='[[tasks]]\nkind = "pairwise"\nid = "pairwise"\nresponse = "choice"\n'
                'pairs = [["cera", "heuristic"], ["cera", "real"]]\ndomains = ["laptop", "restaurant"]\n'),
    Section(
        "tasks.rating", "[[tasks]]", "Rating tasks",
        "Rubric ratings of items the evaluator picks from a list, each item scored on every metric.",
        (
            Key("items", "string (path)", REQUIRED,
                "The rating items file (evalkit's JSONL or GraphMind's records) evaluators pick from."),
            Key("metrics", "array of tables", REQUIRED, "The rubric: one table per question asked of every item.",
                see="tasks.metrics"),
            Key("familiarity", "table", "unset", "A question asked before the metrics.", see="tasks.familiarity"),
            Key("system_label", "table", "the defaults", "How the system's own label of an item is shown.",
                see="tasks.system_label"),
            Key("min_items", "integer ≥ 1", "1", "Items an evaluator must rate before finishing the task."),
            Key("suggested_items", "integer ≥ min_items", "3, or min_items if larger",
                "How many items the page suggests rating."),
        ),
        when=("kind", ("rating",)),
        example='[[tasks]]\nkind = "rating"\nid = "novelty"\nitems = "datasets/novelty-papers.jsonl"\n'
                'min_items = 1\nsuggested_items = 2\n'),
    Section(
        "tasks.metrics", "[[tasks.metrics]]", "Rating metrics",
        "One table per metric of a rating task; its scale is 1 to the number of anchors.",
        (
            Key("id", "string (letters, digits, _, - or .)", REQUIRED,
                "The metric's id, stored with each score; unique in the task."),
            Key("label", "string", "the id, capitalised", "The metric's name on the page and in the results."),
            Key("question", "string", REQUIRED, "The question evaluators answer."),
            Key("anchors", "list of strings (at least 2)", REQUIRED,
                "One description per score: score k is described by the k-th anchor."),
        ),
        example='[[tasks.metrics]]\nid = "specificity"\nlabel = "Specificity"\n'
                'question = "How specific is the assessment to this paper?"\n'
                'anchors = ["Generic", "Mostly generic", "Partly specific", "Specific", "Highly specific"]\n'),
    Section(
        "tasks.familiarity", "[tasks.familiarity]", "Familiarity question",
        "An optional question of a rating task, asked of every item before the metrics; its keys are a "
        "metric's.",
        (
            Key("id", "string (letters, digits, _, - or .)", '"familiarity"', "Its id, stored with each score."),
            Key("label", "string", "the id, capitalised", "Its name on the page and in the results."),
            Key("question", "string", REQUIRED, "The question evaluators answer."),
            Key("anchors", "list of strings (at least 2)", REQUIRED, "One description per level, lowest first."),
        ),
        example='[tasks.familiarity]\nquestion = "How familiar are you with this paper?"\n'
                'anchors = ["Never heard of it", "Heard of it", "Skimmed it", "Read it", "Know it well"]\n'),
    Section(
        "tasks.system_label", "[tasks.system_label]", "System label",
        "How a rating task reads and shows the system's own label of each item.",
        (
            Key("heading", "string", '"Novelty rating"', "The heading above the label."),
            Key("scale", "[lowest, highest] (integers)", "[1, 5]",
                "The label's lowest and highest values; [0, 1] for a binary label."),
            Key("names", "list of strings", "[]",
                "One name per value, lowest first, e.g. [\"Not novel\", \"Novel\"]. None: stars on the default "
                "1-5 scale, else \"3 (on a scale from 0 to 4)\"."),
            Key("probability", "string", '"Probability"',
                "Shown before the item's probability, as a percentage."),
        ),
        example='[tasks.system_label]\nheading = "GraphMind\'s verdict"\nscale = [0, 1]\n'
                'names = ["Not novel", "Novel"]\nprobability = "Probability that the paper is novel"\n'),
    Section(
        "tasks.items", "[[tasks]]", "Tasks over an items file",
        "The keys compare, score and rank tasks share: which items file, which systems, how many questions, and "
        "optionally a queue shared by all evaluators.",
        (
            Key("items", "string (path)", REQUIRED,
                "The items file: JSONL, one input and several systems' outputs per line."),
            Key("systems", "list of strings", "every system of the file",
                "The systems whose outputs are shown (attention-check items aside)."),
            Key("questions", "integer ≥ 1", REQUIRED, "Questions per evaluator; the file must hold enough items. "
                "Not with `assignment = \"fixed\"`, where each participant's list sets it."),
            Key("judgments_per_item", "integer ≥ 1", "unset",
                "Deal the items from one queue shared by all evaluators, so that every item (with every set of "
                "systems a question shows) is judged by exactly this many evaluators. Unset: each evaluator's "
                "items come from their own seed."),
            Key("claim_minutes", "number, 1 to 10080", "30",
                "With `judgments_per_item`: a question not answered within this many minutes goes back to the "
                "queue."),
            _INPUT_LABEL,
            _output_label('"Response"'),
        ),
        when=("kind", ITEMS_KINDS),
        example='[[tasks]]\nkind = "compare"\nid = "replies"\nitems = "items.jsonl"\n'
                'systems = ["gpt4", "t5", "human"]\nquestions = 4\njudgments_per_item = 3\nclaim_minutes = 30\n'),
    Section(
        "tasks.fixed", "[[tasks]]", "Fixed assignments (score and spans tasks)",
        "Each invited participant gets their own predefined, ordered list of items or documents (Pearmut's "
        "task-based campaigns), reached through their private link. See [Fixed lists](../how-to/fixed-lists.md).",
        (
            Key("assignment", "string", '"balanced"',
                "`balanced`: each evaluator's items are drawn from their seed (or the shared queue), systems "
                "balanced. `fixed`: each participant gets exactly the items of their list, in order; a question "
                "shows every output its item has of the task's `systems`. `questions`, `outputs_per_question` and "
                "`judgments_per_item` do not apply.",
                allowed=_str("balanced", "fixed")),
            Key("assignments", "string (path)", "unset",
                "With `fixed`: a CSV with a header `participant_id,item_id`, one row per item in the order the "
                "participant gets them. Unset: the items file's own `\"participants\": [...]` on each item."),
            Key("shuffle", "boolean", "true",
                "With `fixed`: shuffle the outputs of each question (seeded per participant); false keeps the "
                "item's order."),
        ),
        when=("kind", ("score", "spans")),
        example='[[tasks]]\nkind = "spans"\nid = "esa"\nitems = "datasets/documents.jsonl"\nassignment = "fixed"\n'
                'assignments = "datasets/assignments.csv"\nshuffle = true\n'),
    Section(
        "tasks.compare", "[[tasks]]", "Compare tasks",
        "Two systems' outputs for one item's input, side by side: which is better?",
        (
            Key("question", "string", '"Which <output_label> is better?"', _QUESTION),
            Key("response", "string", '"choice"',
                "`choice`: A or B. `choice-tie`: A, B or \"No preference\". `slider`: the HELP slider from -100 "
                "to 100, then accept or reject both.",
                allowed=_str("choice", "choice-tie", "slider")),
        ),
        when=("kind", ("compare",)),
        example='[[tasks]]\nkind = "compare"\nid = "help"\nitems = "datasets/responses.jsonl"\nquestions = 6\n'
                'response = "choice-tie"\n'),
    Section(
        "tasks.score", "[[tasks]]", "Score tasks",
        "Absolute scores of systems' outputs on one or more scales, one output per question or several of one "
        "item side by side.",
        (
            Key("question", "string", '"How good is this <output_label>?"',
                _QUESTION + " With several outputs per question the default asks \"How good is each ...?\""),
            Key("outputs_per_question", "integer ≥ 1", "1",
                "Outputs of one item shown side by side in a question (1: direct assessment); at most the number "
                "of systems."),
            Key("textfield", "string", '"none"',
                "A text box under each output: none, an optional `comment`, or a `post-edit` pre-filled with the "
                "output.",
                allowed=_str("none", "comment", "post-edit")),
            Key("scales", "array of tables", REQUIRED, "The scales, at least one; every output is scored on each.",
                see="tasks.scales"),
        ),
        when=("kind", ("score",)),
        example='[[tasks]]\nkind = "score"\nid = "da"\nitems = "datasets/summaries.jsonl"\nquestions = 4\n'
                'outputs_per_question = 1\ntextfield = "none"\n'),
    Section(
        "tasks.spans", "[[tasks]]", "Error-span tasks (ESA, MQM, ESA-AI)",
        "The evaluator marks the erroneous parts of each output, gives each a severity (and with MQM a category), "
        "then scores the output. The labels default to \"Source\" and \"Translation\". See "
        "[Error spans](../how-to/error-spans.md).",
        (
            Key("question", "string", '"Mark the errors, then score the translation."', _QUESTION),
            Key("protocol", "string", '"esa"',
                "`esa`: spans with a severity, then the scales (default: one 0-100 slider `quality`). `mqm`: spans "
                "with a severity and a category; no scales unless given.",
                allowed=_str("esa", "mqm")),
            Key("severities", "list of 1 to 9 strings", '["minor", "major"]',
                "The severities, in order; the keys 1 to 9 set them. MQM studies often add `critical`; an optional "
                "`neutral` marks something worth noting that is not an error."),
            Key("categories", "string or table", '"mqm-core" (mqm)',
                "MQM only: `\"mqm-core\"` (the typology of Freitag et al. 2021: Accuracy, Fluency, Terminology, "
                "Style, Locale convention with their subcategories, Source error, Non-translation, Other), a table "
                "`{ Accuracy = [\"Mistranslation\", \"Omission\"], Fluency = [] }` (a category with an empty list "
                "has no subcategories), or `\"free\"` (typed in, one line of at most 100 characters). An ESA task "
                "ignores it (`evalkit check` says so)."),
            Key("mqm_weights", "table of numbers ≥ 0", "minor 1, major 5, critical 25, neutral 0",
                "The MQM score's weight of each severity, or of one category at a severity "
                "(`\"minor:Fluency/Punctuation\" = 0.1` and `\"major:Non-translation\" = 25` are defaults, as "
                "Freitag et al. 2021). With MQM every severity needs a weight; an ESA span of a severity without one "
                "counts 0 in the MQM score (said under it)."),
            Key("missing_token", "boolean", "false",
                "A `[missing]` token after each output, on which an omission is marked."),
            Key("word_level", "boolean", "false", "Span ends snap to word boundaries."),
            Key("prefill", "boolean", "false",
                "ESA-AI: each item's `error_spans` are shown as suggestions to keep, change or delete; what "
                "happened to each is stored."),
            Key("outputs_per_question", "integer ≥ 1", "1",
                "Outputs of one item shown side by side, each annotated (contrastive ESA)."),
            Key("min_score_without_spans", "integer", "unset",
                "A score below this with no span marked asks \"No errors are marked: are you sure?\" once."),
            Key("score_per", "string", '"document"',
                "For documents (items with `segments`): the scales once per `document` or once per `segment`.",
                allowed=_str("document", "segment")),
            Key("scales", "array of tables", "ESA: one slider `quality` 0-100; MQM: none",
                "The scales, asked after the spans; as a score task's.", see="tasks.scales"),
        ),
        when=("kind", ("spans",)),
        example='[[tasks]]\nkind = "spans"\nid = "esa"\nitems = "datasets/mt.jsonl"\nsystems = ["modelA", "modelB"]\n'
                'questions = 10\nprotocol = "esa"\nseverities = ["minor", "major"]\nmissing_token = true\n'
                'prefill = false\nmin_score_without_spans = 80\n'),
    Section(
        "tasks.scales", "[[tasks.scales]]", "Score scales",
        "One table per scale of a score task.",
        (
            Key("id", "string (letters, digits, _, - or .)", REQUIRED,
                "The scale's id, stored with each score; unique in the task."),
            Key("label", "string", "the id, capitalised", "The scale's name on the page and in the results."),
            Key("type", "string", REQUIRED,
                "`likert`: levels with anchor texts. `slider`: a number from min to max; it starts in the middle "
                "and must be moved.",
                allowed=_str("likert", "slider")),
        ),
        example='[[tasks.scales]]\nid = "overall"\nlabel = "Overall quality"\ntype = "slider"\n\n'
                '[[tasks.scales]]\nid = "fluency"\ntype = "likert"\n'
                'anchors = ["Incomprehensible", "Hard to read", "Readable", "Fluent", "Perfect"]\n'),
    Section(
        "tasks.scales.likert", "[[tasks.scales]]", "Likert scales",
        "The keys of a scale with `type = \"likert\"`.",
        (
            Key("anchors", "list of strings (at least 2)", REQUIRED,
                "One text per level: levels 1 to the number of anchors, each shown as \"3 · anchor\"."),
        ),
        when=("type", ("likert",))),
    Section(
        "tasks.scales.slider", "[[tasks.scales]]", "Slider scales",
        "The keys of a scale with `type = \"slider\"`.",
        (
            Key("min", "integer", "0", "The slider's lowest value."),
            Key("max", "integer (greater than min)", "100", "The slider's highest value."),
        ),
        when=("type", ("slider",))),
    Section(
        "tasks.rank", "[[tasks]]", "Rank tasks",
        "n systems' outputs for one item's input: pick the best (best-of-N) or rank them all.",
        (
            Key("question", "string", '"Which <output_label> is best?"',
                _QUESTION + " For a ranking the default is `\"Order the <output_label>s from best to worst.\"`."),
            Key("response", "string", '"best"', "`best`: pick one output. `ranking`: give every output a place.",
                allowed=_str("best", "ranking")),
            Key("outputs_per_question", "integer, 0 or ≥ 2", "0",
                "Outputs per question: 0 shows every system, else this many of them."),
        ),
        when=("kind", ("rank",)),
        example='[[tasks]]\nkind = "rank"\nid = "best"\nitems = "datasets/headlines.jsonl"\nquestions = 4\n'
                'response = "best"\noutputs_per_question = 0\n'),
    Section(
        "tasks.media", "[[tasks]]", "Images, audio and video",
        "The key every task over an items file (compare, score, spans, rank, realfake with `items`) takes for "
        "items whose input or outputs are media. See [Images, audio and video](../how-to/media.md).",
        (
            Key("require_full_play", "boolean", "false",
                "Refuse an answer until every audio clip and video of the question was played to the end (the "
                "page logs play, pause, seek and end; the server decides). YouTube and Vimeo players are not "
                "required."),
        ),
        when=("kind", (*ITEMS_KINDS, "realfake")),
        example='[[tasks]]\nkind = "score"\nid = "clips"\nitems = "items.jsonl"\nquestions = 6\n'
                'require_full_play = true\n'),
    Section(
        "tasks.realfake", "[[tasks]]", "Real-or-generated tasks",
        "A Turing test: one text at a time, written by a person or generated, and how sure. Texts come from an "
        "items file (`items`, `systems`, `questions`) or from the review pools (`sources`, `domains`); about "
        "half of each evaluator's questions show the target.",
        (
            Key("target", "string", REQUIRED, "The system (or source) whose texts are real."),
            Key("items", "string (path)", "required, unless sources",
                "The items file the texts come from (one output per question)."),
            Key("systems", "list of strings", "every system of the file",
                "With `items`: the systems shown, the target and at least one other."),
            Key("questions", "integer ≥ 1", "required with items", "With `items`: questions per evaluator."),
            Key("sources", "list of strings (at least 2)", "required, unless items",
                "Without `items`: the review-pool sources the texts come from, the target among them."),
            Key("domains", "list of strings", "required with sources",
                "Without `items`: one question per entry, a text of that domain."),
            Key("confidence", "list of strings", '["Guessing", "Somewhat sure", "Sure", "Very sure"]',
                "The levels of the \"How sure are you?\" question; [] asks no confidence."),
            Key("question", "string", '"Was this text written by a person, or generated by a system?"',
                _QUESTION),
            _INPUT_LABEL,
            Key("output_label", "string (at most 40 characters)", '"The text"',
                "The heading of the text's card, e.g. \"Answer\"."),
        ),
        when=("kind", ("realfake",)),
        example='[[tasks]]\nkind = "realfake"\nid = "turing"\nitems = "datasets/answers.jsonl"\n'
                'systems = ["human", "gpt4"]\ntarget = "human"\nquestions = 8\n'),
    Section(
        "tasks.form", "[[tasks]]", "Background forms",
        "A form filled in once per session; its place among the tasks decides whether it comes before, between "
        "or after the judgments.",
        (
            Key("fields", "array of tables", REQUIRED, "The form's fields, at least one.", see="tasks.fields"),
            Key("submit", "string", '"Continue"', "The text of the form's button."),
        ),
        when=("kind", ("form",)),
        example='[[tasks]]\nkind = "form"\nid = "background"\ntitle = "About you"\nsubmit = "Continue"\n'),
    Section(
        "tasks.fields", "[[tasks.fields]]", "Form fields",
        "One table per field of a form; `type` decides which other keys it takes.",
        (
            Key("id", "string (letters, digits, _, - or .)", REQUIRED,
                "The field's id, stored with each answer; unique in the form."),
            Key("label", "string", "the id, capitalised", "The question shown."),
            Key("type", "string", REQUIRED, "What the field takes.",
                allowed=_str("text", "number", "choice", "multichoice", "likert")),
            Key("optional", "boolean", "false", "Whether the field may be left empty."),
            Key("help", "string", '""', "A tooltip beside the label."),
        ),
        example='[[tasks.fields]]\nid = "age"\nlabel = "How old are you?"\ntype = "number"\nmin = 18\nmax = 99\n'
                'optional = true\n'),
    Section(
        "tasks.fields.text", "[[tasks.fields]]", "Text fields",
        "The keys of a field with `type = \"text\"`.",
        (
            Key("max_length", "integer, 1 to 10000", "1000", "The most characters an answer may have."),
        ),
        when=("type", ("text",))),
    Section(
        "tasks.fields.number", "[[tasks.fields]]", "Number fields",
        "The keys of a field with `type = \"number\"`.",
        (
            Key("min", "number", "unset", "The smallest number accepted (inclusive)."),
            Key("max", "number", "unset", "The largest number accepted (inclusive)."),
            Key("integer", "boolean", "true", "Whole numbers only; false also accepts e.g. 2.5."),
        ),
        when=("type", ("number",))),
    Section(
        "tasks.fields.choice", "[[tasks.fields]]", "Choice fields",
        "The keys of a field with `type = \"choice\"` (one option) or `\"multichoice\"` (any number of them, at "
        "least one unless optional).",
        (
            Key("options", "list of strings (at least 2, different)", REQUIRED, "The options, in this order."),
        ),
        when=("type", ("choice", "multichoice"))),
    Section(
        "tasks.fields.likert", "[[tasks.fields]]", "Likert fields",
        "The keys of a field with `type = \"likert\"`: levels with a text each (`anchors`), or levels min to max "
        "with labels on the ends only.",
        (
            Key("anchors", "list of strings (at least 2)", "required, unless min and max",
                "One text per level; the levels are 1 to the number of anchors."),
            Key("min", "integer", "required without anchors", "The lowest level."),
            Key("max", "integer", "required without anchors", "The highest level (2 to 11 levels in all)."),
            Key("min_label", "string", '""', "The lowest level's label (with min and max)."),
            Key("max_label", "string", '""', "The highest level's label (with min and max)."),
        ),
        when=("type", ("likert",)),
        example='[[tasks.fields]]\nid = "difficulty"\nlabel = "How hard was it to choose?"\ntype = "likert"\n'
                'min = 1\nmax = 7\nmin_label = "Very easy"\nmax_label = "Very hard"\n'),
    Section(
        "checks", "[[tasks]]", "Tutorials and attention checks",
        "Check questions of a task. Tasks over an items file name items of that file that carry a `check` "
        "object; tasks over the review pools name entries of their `checks` file. Only these kinds take them.",
        (
            Key("tutorial", "list of strings", "[]",
                "Practice questions shown first, in this order; a wrong answer shows the check's feedback and "
                "must be corrected."),
            Key("tutorial_skippable", "boolean", "false",
                "After a wrong practice answer, offer a button to skip the question instead."),
            Key("attention_checks", "list of strings", "[]",
                "Check questions mixed into the task's questions at seeded positions, looking like the others; "
                "whether the first answer was right decides pass or fail."),
            Key("attention_feedback", "boolean", "false",
                "false: silent, the answer is only recorded. true: a wrong first answer shows the feedback and "
                "the evaluator answers once more."),
            Key("checks", "string (path)", "required for review-pool checks",
                "Tasks over the review pools only: the JSONL file defining their check ids (`id`, `reviews`, "
                "`expect`, `feedback`)."),
        ),
        when=("kind", CHECK_KINDS),
        example='[[tasks]]\nkind = "compare"\nid = "replies"\nitems = "items.jsonl"\nquestions = 4\n'
                'tutorial = ["tutorial1"]\ntutorial_skippable = false\nattention_checks = ["gold01", "gold02"]\n'
                'attention_feedback = false\n'),
)


def section(section_id: str) -> Section:
    """The section with this id (KeyError if none)."""
    for sec in SECTIONS:
        if sec.id == section_id:
            return sec
    raise KeyError(section_id)
