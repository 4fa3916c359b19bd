"""The toolkit a task kind's analysis and the study-level report share: integer codes of the answer tables
(:mod:`~evalkit.resultkit.codes`), the tables as frames (:mod:`~evalkit.resultkit.frames`), what an analysis gets
and returns (:mod:`~evalkit.resultkit.parts`), numbers and tables formatted for display
(:mod:`~evalkit.resultkit.formatting`), the shared charts (:mod:`~evalkit.resultkit.charts`) and Bradley–Terry
across evaluators (:mod:`~evalkit.resultkit.bradley_terry`).

It sits below the task kinds: the kinds' ``*_analysis`` modules import it, and so do :mod:`evalkit.analysis`,
:mod:`evalkit.export` and :mod:`evalkit.charts` above them. May import :mod:`evalkit.stats` and
:mod:`evalkit.items` (types); never a task kind or anything above.
"""

from .bradley_terry import WinsByEvaluator, bradley_terry_intervals, bt_evaluators
from .charts import BLUE, GREY, RED, bt_chart, rate_chart
from .codes import (
    code_of,
    column_codes,
    float_column,
    item_codes,
    json_int,
    json_values,
    ndjson_buffer,
    recode_column,
    score_values,
    slider_buttons,
    take_codes,
)
from .formatting import (
    SCORE_ROW_COLUMNS,
    alpha_notes,
    alpha_text,
    bt_note,
    bt_table,
    count_text,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    mos_note,
    mos_table,
    p_clause,
    rate_table,
    ratings_text,
    scale_text,
)
from .frames import EVALUATION_COLUMNS, RATING_COLUMNS, SESSION_COLUMNS, Frames, rated_item_keys, tasks_of
from .parts import (
    BT_ONE_EVALUATOR,
    Block,
    Options,
    ResultDefaults,
    TaskContext,
    TaskResult,
    bt_frame,
    interval_row,
    strongest_first,
)

__all__ = [
    "BLUE",
    "BT_ONE_EVALUATOR",
    "EVALUATION_COLUMNS",
    "GREY",
    "RATING_COLUMNS",
    "RED",
    "SCORE_ROW_COLUMNS",
    "SESSION_COLUMNS",
    "Block",
    "Frames",
    "Options",
    "ResultDefaults",
    "TaskContext",
    "TaskResult",
    "WinsByEvaluator",
    "alpha_notes",
    "alpha_text",
    "bradley_terry_intervals",
    "bt_chart",
    "bt_evaluators",
    "bt_frame",
    "bt_note",
    "bt_table",
    "code_of",
    "column_codes",
    "count_text",
    "float_column",
    "fmt_ci",
    "fmt_num",
    "fmt_p",
    "fmt_pct",
    "interval_row",
    "item_codes",
    "json_int",
    "json_values",
    "mos_note",
    "mos_table",
    "ndjson_buffer",
    "p_clause",
    "rate_chart",
    "rate_table",
    "rated_item_keys",
    "ratings_text",
    "recode_column",
    "scale_text",
    "score_values",
    "slider_buttons",
    "strongest_first",
    "take_codes",
    "tasks_of",
]
