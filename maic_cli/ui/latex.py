"""Simple LaTeX as Unicode, for the terminal: Greek letters and common symbols, ``\\frac``,
superscripts and subscripts of digits.  Linear in the length of its input."""

from __future__ import annotations

import re

_LATEX_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "theta": "θ", "lambda": "λ",
    "mu": "μ", "nu": "ν", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "omega": "ω",
    "Delta": "Δ", "Sigma": "Σ", "Omega": "Ω", "Pi": "Π", "times": "×", "cdot": "·", "pm": "±", "div": "÷",
    "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "infty": "∞",
    "rightarrow": "→", "to": "→", "leftarrow": "←", "Rightarrow": "⇒", "sum": "Σ", "prod": "Π", "int": "∫",
    "partial": "∂", "nabla": "∇", "propto": "∝", "in": "∈", "forall": "∀", "exists": "∃", "sqrt": "√",
    "degree": "°", "circ": "°", "ldots": "…", "cdots": "⋯", "quad": " ", "left": "", "right": "",
}
_SUPERSCRIPT = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_SUBSCRIPT = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_FRAC = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_SCRIPT = re.compile(r"([\^_])(\{([0-9+\-=()n]+)\}|([0-9n]))")


def latex_to_unicode(source: str) -> str:
    text = _FRAC.sub(r"(\1)/(\2)", source)
    text = _COMMAND.sub(lambda m: _LATEX_SYMBOLS.get(m.group(1), m.group(0)), text)

    def script(match: re.Match[str]) -> str:
        body = match.group(3) or match.group(4)
        return body.translate(_SUPERSCRIPT if match.group(1) == "^" else _SUBSCRIPT)

    return _SCRIPT.sub(script, text)
