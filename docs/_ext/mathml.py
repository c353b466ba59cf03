"""Formulas rendered to MathML when the site is built: pages that show their mathematics with no network and no
script (browsers render MathML Core natively: Chromium 109+, Firefox, Safari).

Sphinx's own ``sphinx.ext.mathjax`` loads MathJax from a CDN in the reader's browser, so offline the formulas
of the conventions and method pages showed as raw LaTeX. This renderer converts each formula once, at build
time, with `latex2mathml <https://pypi.org/project/latex2mathml/>`_ (a maintained, pure-Python LaTeX to MathML
converter), through Sphinx's API for math renderers (``app.add_html_math_renderer``, as the MathJax and imgmath
extensions register theirs). A formula latex2mathml cannot read stops the build with its source named.
"""

from __future__ import annotations

import html
from typing import Any

from docutils import nodes
from latex2mathml.converter import convert

#: amsmath environments MyST passes through whole; MathML gets their body in an ``aligned`` block.
_ALIGN_ENVIRONMENTS = ("align", "align*", "equation", "equation*", "gather", "gather*")


def _mathml(latex: str, display: str, where: str) -> str:
    latex = latex.strip()
    for env in _ALIGN_ENVIRONMENTS:
        begin, end = f"\\begin{{{env}}}", f"\\end{{{env}}}"
        if latex.startswith(begin) and latex.endswith(end):
            body = latex[len(begin):-len(end)]
            latex = body if env.startswith("equation") else f"\\begin{{aligned}}{body}\\end{{aligned}}"
    try:
        return convert(latex, display=display)
    except Exception as exc:  # latex2mathml raises its own exception types and plain ones alike
        raise ValueError(f"{where}: cannot render {latex!r} as MathML: {exc}") from None


def visit_math(self: Any, node: nodes.Element) -> None:
    where = f"{node.source or self.builder.current_docname}:{node.line}"
    self.body.append(f'<span class="math">{_mathml(node.astext(), "inline", where)}</span>')
    raise nodes.SkipNode


def visit_displaymath(self: Any, node: nodes.Element) -> None:
    where = f"{node.source or self.builder.current_docname}:{node.line}"
    label = f' id="{html.escape(node["ids"][0])}"' if node.get("ids") else ""
    self.body.append(f'<div class="math"{label}>{_mathml(node.astext(), "block", where)}</div>\n')
    raise nodes.SkipNode


def setup(app: Any) -> dict[str, Any]:
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_displaymath, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
