"""Corrections read off a change (`memstore.verify.corrections`): what now stands where a fact's
value stood, whole, and nothing spliced from code that took another shape."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstore.verify.corrections import replacements, rewrite
from memstore.verify.reading import read_fact


def corrected(fact: str, then: str, now: str) -> tuple[dict[str, str], str]:
    found = replacements(then, now, read_fact(fact).mentions)
    return {m.text: new for m, new in found.items()}, rewrite(fact, found)


def test_a_call_is_replaced_by_the_call_that_took_its_place() -> None:
    assert corrected(
        "The master subtracts the heartbeat from time.time().",
        "    if time.time() - last <= timeout:",
        "    if time.monotonic() - last <= timeout:",
    ) == ({"time.time()": "time.monotonic()"}, "The master subtracts the heartbeat from time.monotonic().")


def test_a_url_is_replaced_whole() -> None:
    assert (
        corrected(
            "The logo is https://img.example.org/v1/logo.gif",
            ".. |Logo| image:: https://img.example.org/v1/logo.gif",
            ".. |Logo| image:: https://cdn.example.org/v2/logo.gif",
        )[1]
        == "The logo is https://cdn.example.org/v2/logo.gif"
    )


def test_a_replacement_ends_where_a_word_ends() -> None:
    """Character by character, ``cli`` and ``__main__`` share letters; the replacement is still the
    whole module name, not ``__mai``."""
    assert (
        corrected(
            "The entry point is dotenv.cli:cli.",
            "    'console_scripts': ['dotenv=dotenv.cli:cli'],",
            "    'console_scripts': ['dotenv=dotenv.__main__:cli'],",
        )[1]
        == "The entry point is dotenv.__main__:cli."
    )


def test_a_quoted_value_keeps_the_quotes_the_fact_wrote() -> None:
    assert (
        corrected(
            'It writes with mode "w+".',
            '    with NamedTemporaryFile(mode="w+", delete=False) as dest:',
            '    with NamedTemporaryFile(mode="w", encoding=encoding, delete=False) as dest:',
        )[1]
        == 'It writes with mode "w".'
    )


def test_nothing_is_read_off_code_that_took_another_shape() -> None:
    # the words around it changed: ``python -m build`` is no replacement for ``setup.py``
    assert (
        corrected("It packages with `setup.py`.", "    python setup.py sdist bdist_wheel", "    python -m build")[0]
        == {}
    )
    # the statement became another one: no piece of the new one stands for the check
    assert (
        corrected(
            "Paths use a `sys.version_info >= (3, 6)` check.",
            "if sys.version_info >= (3, 6):\n    _PathLike = os.PathLike",
            "def with_warn(mappings: Iterator[Binding]) -> Iterator:\n    for m in mappings:",
        )[0]
        == {}
    )
    # a replacement with its brackets cut is no value
    assert (
        corrected("Its main block calls `Arbiter().run()`.", "    Arbiter().run()", "    return run(Arbiter())")[0]
        == {}
    )


NAMES = st.sampled_from(["alpha_one", "beta_two", "gamma_three", "delta_four", "eps_five", "zeta_six", "eta_seven"])


@given(st.lists(NAMES, min_size=4, max_size=8, unique=True), st.data())
def test_a_name_replaced_in_a_call_is_corrected_to_the_new_name(names: list[str], data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(names) - 1))
    fresh = "omega_" + names[at].split("_")[0] + "_new"
    then = "result = call(" + ", ".join(names) + ")"
    now = then.replace(names[at], fresh)
    found, fact = corrected(f"The call passes `{names[at]}`.", then, now)
    assert found == {f"`{names[at]}`": fresh}
    assert fact == f"The call passes `{fresh}`."
