"""HTML fragments: every trace string escaped, markdown without raw HTML, images or script links."""

from __future__ import annotations

from viewer.render.safe import markdown, pre, text


def test_text_escapes_quotes_and_tags():
    assert text('<b a="1">') == "&lt;b a=&quot;1&quot;&gt;"


def test_markdown_has_no_raw_html_images_or_script_links():
    out = markdown("**ok** <script>x()</script> <img src=x onerror=y> ![i](http://e.invalid/i.png) "
                   "[a](javascript:alert(1)) [b](https://example.org)")
    assert "<strong>ok</strong>" in out
    assert "<script" not in out and "<img" not in out and "href=\"javascript" not in out
    assert "&lt;script&gt;" in out
    assert 'rel="noopener noreferrer nofollow"' in out


def test_long_text_is_folded_not_cut():
    body = "x" * 5000 + "END"
    out = pre(body, fold=100)
    assert "<details" in out and "END" in out and "show all 5,003 characters" in out


def test_component_css_is_a_safe_gradio_template():
    """Gradio evaluates css_template as a JavaScript template string: a backtick, a backslash or `${`
    breaks the whole component ("Error rendering HTML"). Scoped CSS needs no !important either."""
    from viewer import assets

    for name in ("trace_view.css", "collection_index.css"):
        css = assets.read(name)
        assert "`" not in css and "\\" not in css and "${" not in css, name
        assert "!important" not in css, name
