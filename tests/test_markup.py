"""evalkit.markup: untrusted HTML (Pearmut's per-item instructions) made into safe Markdown.

Each result is rendered by a CommonMark implementation (markdown-it-py; Streamlit renders Markdown by CommonMark's
rules) with raw HTML *enabled*, the worst case: even then no element but the ones our Markdown makes may appear,
and no attribute but a link's http(s) ``href``.
"""

from __future__ import annotations

import re

import lxml.html
import pytest
from markdown_it import MarkdownIt

from evalkit.markup import ALLOWED_TAGS, DROPPED_TAGS, html_to_markdown

#: what our Markdown may render to
SAFE_ELEMENTS = {"div", "p", "strong", "em", "code", "a", "br", "ul", "ol", "li"}


def render(markdown: str) -> str:
    """The HTML a CommonMark renderer makes of ``markdown``, raw HTML passed through (the worst case)."""
    return MarkdownIt("commonmark", {"html": True}).render(markdown)


def elements(markdown: str) -> list[lxml.html.HtmlElement]:
    """Every element of the rendered Markdown (inside one wrapping div)."""
    root = lxml.html.fragment_fromstring(render(markdown) or "<p></p>", create_parent="div")
    return list(root.iter())


def shown(markdown: str) -> str:
    """The text a reader sees (white space runs as one space)."""
    root = lxml.html.fragment_fromstring(render(markdown) or "<p></p>", create_parent="div")
    return " ".join(root.text_content().split())


def assert_safe(markdown: str) -> None:
    """Only our elements, no attribute but an http(s) link's href (and an ordered list's start)."""
    for element in elements(markdown):
        assert element.tag in SAFE_ELEMENTS, (element.tag, markdown)
        for name, value in element.attrib.items():
            if element.tag == "a" and name == "href":
                assert re.match(r"https?://", value), value
            elif element.tag == "ol" and name == "start":
                continue
            else:
                raise AssertionError(f"attribute {name}={value!r} on <{element.tag}> in {markdown!r}")


HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    '<img src=x onerror="alert(1)">',
    '<img src="javascript:alert(1)" alt="a picture">',
    '<b onmouseover="alert(1)">hover</b>',
    '<a href="javascript:alert(1)">click</a>',
    '<a href="JaVaScRiPt:alert(1)">click</a>',
    '<a href="java&#x09;script:alert(1)">tab</a>',
    '<a href="  javascript:alert(1)">spaces</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data</a>',
    '<a href="vbscript:msgbox(1)">vb</a>',
    '<a href="/relative">relative</a>',
    '<a href="//evil.example/">protocol relative</a>',
    '<iframe src="https://evil.example/"></iframe>',
    '<iframe srcdoc="<script>alert(1)</script>">x</iframe>',
    "<style>body {display: none}</style>",
    '<p style="position:fixed;top:0;left:0;width:100%;height:100%">cover</p>',
    "<svg onload=alert(1)><circle r=5 /></svg>",
    "<svg><script>alert(1)</script></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<object data="x.swf"></object><embed src="x.swf">',
    "<form action=https://evil.example><input name=q><button>go</button></form>",
    "<meta http-equiv=refresh content='0;url=https://evil.example'>",
    "<base href=https://evil.example/>",
    "<link rel=stylesheet href=https://evil.example/x.css>",
    "<!-- <script>alert(1)</script> -->text",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
    "<template><script>alert(1)</script></template>",
    '<video src=x onerror=alert(1)>fallback</video><audio src=x></audio>',
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&amp;lt;script&amp;gt;",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    "<b>unclosed <i>tags <u>everywhere",
    "</b></i>closing only</p>",
    "<<b>>double<</b>>",
    '<a href="https://ok.example/">a <a href="javascript:x">nested</a> link</a>',
    "[link](javascript:alert(1)) ![img](https://evil.example/x.png) <https://evil.example>",
    "<b>[x](javascript:alert(1))</b>",
    "`<script>` **not bold** _nor this_ # no heading\n- no list\n> no quote\n    no code block",
    ":red[not red] $x^2$ :material/home: ~~no strike~~ | no | table |",
    "<div><h1>heading</h1><ul><li>one<ol><li>two</li></ol></li></ul></div>",
    "<b>" * 500 + "deep" + "</b>" * 500,
    "<i><b>" * 20000 + "very deep" + "</b></i>" * 20000,
]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_html_becomes_inert(hostile: str) -> None:
    markdown = html_to_markdown(hostile)
    assert_safe(markdown)
    assert "javascript" not in render(markdown).lower() or "javascript" in shown(markdown).lower()  # (as text only)
    for bad in ("onerror", "onload", "onmouseover", "<script", "<iframe", "<style", "<img", "<svg"):
        assert bad not in render(markdown).lower()


def test_scripts_styles_embeds_and_media_go_with_their_content() -> None:
    assert html_to_markdown("<script>alert(1)</script>before<style>b {}</style>after") == "beforeafter"
    assert html_to_markdown('<iframe src="https://x.example">inner</iframe>kept') == "kept"
    assert html_to_markdown('<video src="a.mp4">Your browser cannot play it</video>x') == "x"
    assert html_to_markdown("<svg><script>1</script><text>t</text></svg>ok") == "ok"
    assert {"script", "style", "iframe", "audio", "video"} <= DROPPED_TAGS
    assert not ALLOWED_TAGS & DROPPED_TAGS


def test_an_image_leaves_its_alt_text_only() -> None:
    markdown = html_to_markdown('See <img src="https://x.example/a.png" onerror="alert(1)" alt="the chart"> here')
    assert shown(markdown) == "See the chart here"
    assert html_to_markdown('<img src="x.png">') == ""


def test_event_handlers_and_styles_are_removed_the_text_kept() -> None:
    markdown = html_to_markdown('<b onclick="alert(1)" style="color:red">Bold</b> and <p style="x">para</p>')
    assert markdown == "**Bold** and\n\npara"
    assert "<strong>Bold</strong>" in render(markdown)


def test_links_only_http_and_https() -> None:
    markdown = html_to_markdown('<a href="https://example.org/a b?q=(1)&x=<2>">the guide</a>')
    assert markdown == "[the guide](https://example.org/a%20b?q=%281%29&x=%3C2%3E)"
    assert '<a href="https://example.org/a%20b?q=%281%29&amp;x=%3C2%3E">the guide</a>' in render(markdown)
    for href in ("javascript:alert(1)", "data:text/html,x", "/relative", "#top", "mailto:a@b.example",
                 "//evil.example/", "ftp://x.example/"):
        markdown = html_to_markdown(f'<a href="{href}">text</a>')
        assert markdown == "text", href
        assert "<a" not in render(markdown)
    assert html_to_markdown('<a href="http://x.example/"></a>') == r"[http\://x\.example/](http://x.example/)"


def test_markdown_in_the_text_shows_as_typed() -> None:
    hostile = ("# title *star* _under_ **bold** `code` [l](https://x.example) <b>real bold</b> 1. two > three "
               "$math$ :red[x] | a | b |")
    markdown = html_to_markdown(hostile)
    assert shown(markdown) == ("# title *star* _under_ **bold** `code` [l](https://x.example) real bold 1. two > "
                               "three $math$ :red[x] | a | b |")
    assert [e.tag for e in elements(markdown)] == ["div", "p", "strong"]


def test_entities_are_decoded_once_and_shown_as_text() -> None:
    assert shown(html_to_markdown("Unsupported tags like &lt;u&gt; stay text &amp; so does &amp;lt;b&amp;gt;")) == \
        "Unsupported tags like <u> stay text & so does &lt;b&gt;"
    assert html_to_markdown("caf&eacute; &#x41;&#66; a&nbsp;b") == "café AB a\xa0b"


def test_pearmut_tutorial_instructions() -> None:
    """Pearmut's examples (tutorials/esa_deen.json, attention_checks.json): bold, underline, line breaks."""
    markdown = html_to_markdown(
        '<b>Let\'s mark a major error.</b>The words <u>"stayed inside"</u> are completely wrong.<br>1. Select and '
        'mark "stayed inside" as an error<br>2. Move the slider to 10-20%')
    assert markdown == ("**Let's mark a major error\\.** The words *\"stayed inside\"* are completely wrong\\.\\\n"
                        "1\\. Select and mark \"stayed inside\" as an error\\\n2\\. Move the slider to 10\\-20%")
    html = render(markdown)
    assert "<strong>Let's mark a major error.</strong>" in html and "<em>&quot;stayed inside&quot;</em>" in html
    assert html.count("<br />") == 2 and "<ol" not in html  # the numbers are the author's text, not a list
    markdown = html_to_markdown("<b>Welcome!</b><br><br>In this task, you evaluate <b>German to English</b>.")
    assert render(markdown) == ("<p><strong>Welcome!</strong></p>\n<p>In this task, you evaluate <strong>German to "
                                "English</strong>.</p>\n")


@pytest.mark.parametrize(("source", "html"), [
    ("<b>a</b>", "<p><strong>a</strong></p>"),
    ("<strong>a</strong> <em>b</em> <i>c</i> <u>d</u>", "<p><strong>a</strong> <em>b</em> <em>c</em> <em>d</em></p>"),
    ("<b> spaced </b>!", "<p><strong>spaced</strong> !</p>"),
    ("<b>bold.</b>Next", "<p><strong>bold.</strong> Next</p>"),
    ("x<b>(y)</b>z", "<p>x <strong>(y)</strong> z</p>"),
    ("un<b>believ</b>able", "<p>un<strong>believ</strong>able</p>"),
    ("<b>a</b><i>b</i>", "<p><strong>a</strong>\u200b<em>b</em></p>"),
    ("<b>a <b>nested</b> b</b>", "<p><strong>a nested b</strong></p>"),
    ("<b>bold <i>both</i></b>", "<p><strong>bold <em>both</em></strong></p>"),
    ("<b><i>both</i></b>.", "<p><em><strong>both</strong></em>.</p>"),
    ("<b>unclosed <i>nested", "<p><strong>unclosed <em>nested</em></strong></p>"),
    ("<b></b><i>  </i>x", "<p>x</p>"),
    ("<b>line<br>break</b>", "<p><strong>line<br />\nbreak</strong></p>"),
    ("<b>end<br></b>next", "<p><strong>end</strong><br />\nnext</p>"),
    ("a<br>b<br/>c", "<p>a<br />\nb<br />\nc</p>"),
    ("<br><br>a<br><br><br>b<br>", "<p>a</p>\n<p>b</p>"),
    ("<p>one</p><p>two</p>", "<p>one</p>\n<p>two</p>"),
    ("<div>one</div>two", "<p>one</p>\n<p>two</p>"),
    ("<h2>Head</h2>tail", "<p><strong>Head</strong></p>\n<p>tail</p>"),
    ("<code>a `b` <b>c</b></code>", "<p><code>a `b` c</code></p>"),
    ("<code>`x</code>", "<p><code>`x</code></p>"),
    ("<code><script>x</script></code>y", "<p>y</p>"),
    ("<ul><li>one</li><li>two</li></ul>", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>"),
    ("<ol><li>one</li><li>two</li></ol>", "<ol>\n<li>one</li>\n<li>two</li>\n</ol>"),
    ("<ul><li>one<ul><li>inner</li></ul></li></ul>", "<ul>\n<li>one\n<ul>\n<li>inner</li>\n</ul>\n</li>\n</ul>"),
    ("<ul><li>a</li></ul><ul><li>b</li></ul>", "<ul>\n<li>a</li>\n</ul>\n<ul>\n<li>b</li>\n</ul>"),
    ("<ul><li>1. not a list</li></ul>", "<ul>\n<li>1. not a list</li>\n</ul>"),
    ("<ul><li></li><li>x</li></ul>", "<ul>\n<li>x</li>\n</ul>"),
    ('<a href="https://x.example"><b>bold link.</b></a>next',
     '<p><a href="https://x.example"><strong>bold link.</strong></a>next</p>'),
])
def test_formatting(source: str, html: str) -> None:
    markdown = html_to_markdown(source)
    assert render(markdown).strip() == html
    assert_safe(markdown)


def test_nothing_visible_is_empty() -> None:
    for source in ("", "   ", "<br><br>", "<script>x</script>", "<!-- c -->", "<b> </b>", "<img src=x>"):
        assert html_to_markdown(source) == ""


def test_white_space_is_html_white_space() -> None:
    assert html_to_markdown("a\n  b\t\tc\r\n") == "a b c"
    assert html_to_markdown("<p>\n    indented\n</p>") == "indented"  # never a code block


def test_deep_nesting_costs_no_recursion() -> None:
    markdown = html_to_markdown("<b><i>" * 50_000 + "deep" + "</i></b>" * 50_000)
    assert shown(markdown) == "deep"
    markdown = html_to_markdown("<ul><li>" * 5_000 + "item" + "</li></ul>" * 5_000)
    assert shown(markdown) == "item"
    assert_safe(markdown)
    assert render(markdown).count("<ul>") == 5  # lists deeper than five: their text as paragraphs
