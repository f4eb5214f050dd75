"""What a trace's text becomes: escaped HTML fragments, and the token view's records (markdown parsed into nodes,
folded text), both without raw HTML, images or script links."""

from __future__ import annotations

from viewer.contract import Md
from viewer.render.markdown import parse
from viewer.render.safe import folded, markdown, pre, text


def _flat(nodes: list[Md]) -> list[Md]:
    return [x for n in nodes for x in [n, *_flat(n.children)]]


def test_text_escapes_quotes_and_tags():
    assert text('<b a="1">') == "&lt;b a=&quot;1&quot;&gt;"


def test_markdown_has_no_raw_html_images_or_script_links():
    out = markdown("**ok** <script>x()</script> <img src=x onerror=y> ![i](http://e.invalid/i.png) "
                   "[a](javascript:alert(1)) [b](https://example.org)")
    assert "<strong>ok</strong>" in out
    assert "<script" not in out and "<img" not in out and "href=\"javascript" not in out
    assert "&lt;script&gt;" in out
    assert 'rel="noopener noreferrer nofollow"' in out


def test_markdown_records_hold_text_and_checked_links_only():
    blocks, too_long = parse("**ok** <script>x()</script> <img src=x onerror=y> ![i](http://e.invalid/i.png) "
                             "[a](javascript:alert(1)) [b](https://example.org)\nnext\n\n- one\n- `two`\n\n```\n<b>\n```")
    assert too_long is None
    nodes = _flat(blocks)
    assert [n.tag for n in blocks] == ["p", "ul", "pre"]
    assert Md("strong", children=[Md("text", text="ok")]) in nodes and Md("br") in nodes
    assert {n.href for n in nodes if n.tag == "a"} == {"http://e.invalid/i.png", "https://example.org"}  # no script link
    texts = "".join(n.text for n in nodes)
    assert "<script>x()</script>" in texts and "<img src=x onerror=y>" in texts  # raw HTML stays text
    assert "[a](javascript:alert(1))" in texts
    assert Md("code", text="two") in nodes and Md("code", text="<b>\n") in nodes
    assert {n.tag for n in nodes} <= {"p", "ul", "li", "pre", "code", "strong", "a", "br", "text"}


def test_long_text_is_folded_not_cut():
    body = "x" * 5000 + "END"
    out = pre(body, fold=100)
    assert "<details" in out and "END" in out and "show all 5,003 characters" in out
    f = folded(body, fold=100, label="the result")
    assert (f.head, f.rest, f.chars, f.unsent, f.label) == ("x" * 100, body[100:], 5003, 0, "the result")
    assert folded("short").rest == "" and folded("short").head == "short"


def test_component_css_is_a_safe_gradio_template():
    """Gradio evaluates css_template as a JavaScript template string: a backtick, a backslash or `${`
    breaks the whole component ("Error rendering HTML"). Scoped CSS needs no !important either."""
    from viewer import assets

    for name in ("trace_view.css", "collection_index.css"):
        css = assets.read(name)
        assert "`" not in css and "\\" not in css and "${" not in css, name
        assert "!important" not in css, name
