"""The Workshop page's parts: the exercise chooser (``?exercise=N``, remembered across pages), the
address the printed links start with, the button that loads an exercise's scenario into the
sidebar, its links, the answer from :mod:`core.teaching.answers`, and the handout's downloads."""

from __future__ import annotations

import datetime as dt
import functools

import streamlit as st

from core.spec.release import current_release
from core.teaching.answers import answer, page_inputs
from core.teaching.exercises import AUTO, Exercise, app_root, exercise, is_loopback, room_root
from core.teaching.handout import MIME_TYPES, RENDERERS, file_name, markdown_steps, scenario_words
from core.teaching.text import Answer
from ui import defaults
from ui.download import download_button
from ui.engine_inputs import FOLLOWING_KEYS
from ui.i18n import lang, t
from ui.levers import OFF
from ui.model_search import SEARCH_KEY
from ui.safe import escape_markdown
from ui.sim_inputs import PREFIX as LOAD_TEST_PREFIX

CHOOSER = "exercise"
"""The chooser's widget key and URL parameter: the chosen exercise's number."""
REMEMBERED = "workshop_exercise"
"""Session key of no widget: the exercise last shown. Streamlit drops a widget's state once a run
of another page leaves it out, so this is what brings a student back to it through the nav."""
ROOM = "workshop_room"
"""Session key of no widget: the address students use, as the teacher typed it."""
ROOM_INPUT = "workshop_room_input"
LOADED = "workshop_loaded"
PAGE_FILES = {
    "explorer": ("pages/explorer_page.py", "nav.explorer"),
    "learn": ("pages/learn_page.py", "nav.learn"),
    "plan": ("pages/plan_page.py", "nav.plan"),
    "load-test": ("pages/loadtest_page.py", "nav.loadtest"),
}
LEVERS_OFF = {
    "spec": OFF,
    "prefix": 0,
    "prefix_hit": 0.0,
    "offload_w": 0.0,
    "offload_kv": 0.0,
    "lora_n": 0,
    "attn": "flash",
}
"""The Optimizations section's inputs with every lever off (their defaults)."""


def chosen_exercise(exercises: tuple[Exercise, ...]) -> Exercise:
    """The exercise chosen in a row of radio buttons, kept in the URL as ``exercise`` (the first one
    left out). Arriving on the page (a new session, or back from another page), a link's
    ``?exercise=N`` wins, else the exercise last shown in this session; a link's value is judged
    with the sidebar's (ui.link_state)."""
    numbers = [str(ex.number) for ex in exercises]
    if CHOOSER not in st.session_state:
        raw = st.query_params.get(CHOOSER)
        if raw not in numbers:
            raw = st.session_state.get(REMEMBERED)
        st.session_state[CHOOSER] = raw if raw in numbers else numbers[0]
    titles = {str(ex.number): t(ex.title) for ex in exercises}
    value = st.radio(
        t("workshop.chooser"), numbers, key=CHOOSER, horizontal=True, format_func=lambda n: f"{n}. {titles[n]}"
    )
    st.session_state[REMEMBERED] = value
    if value == numbers[0]:
        st.query_params.pop(CHOOSER, None)
    else:
        st.query_params[CHOOSER] = value
    return exercises[numbers.index(value)]


def browser_root() -> str:
    """The app's address as the browser on this page reached it (its URL, else the Host header it
    sent; "" when neither is known)."""
    if st.context.url:
        return app_root(st.context.url)
    host = st.context.headers.get("Host")
    return f"http://{host}/" if host else ""


def _keep_room() -> None:
    st.session_state[ROOM] = st.session_state[ROOM_INPUT]


def link_root() -> str:
    """The address printed links start with: the browser's, or when that opens only on this
    computer (loopback) the room address the teacher types here. Said on the page, never silent."""
    root = browser_root()
    if not is_loopback(root):
        return root
    st.warning(t("workshop.room_warning", address=root), icon=":material/wifi_off:")
    if ROOM_INPUT not in st.session_state:  # arriving: the input starts from what was typed before
        st.session_state[ROOM_INPUT] = st.session_state.get(ROOM, "")
    typed = st.text_input(
        t("workshop.room_label"),
        key=ROOM_INPUT,
        on_change=_keep_room,
        placeholder=t("workshop.room_placeholder"),
        help=t("workshop.room_help"),
    ).strip()
    if not typed:
        return root
    try:
        room = room_root(typed)
    except ValueError:
        st.error(t("workshop.room_invalid", value=escape_markdown(typed), address=root))
        return root
    if is_loopback(room):
        st.error(t("workshop.room_is_loopback", value=escape_markdown(typed)))
        return root
    st.caption(t("workshop.room_used", address=room))
    return room


def sidebar_values(ex: Exercise) -> dict[str, object]:
    """Every sidebar input the scenario sets, with the engine settings and the levers at their
    defaults (as a fresh session has them), by widget key; the inputs whose default follows the
    scenario (:data:`~ui.engine_inputs.FOLLOWING_KEYS`) are left to :mod:`ui.defaults`."""
    scenario = ex.scenario
    values: dict[str, object] = {
        SEARCH_KEY: "",
        "model": scenario.model,
        "gpu": scenario.gpu,
        "tp": scenario.tp,
        "dp": 1,
        "weights": scenario.weights,
        "kv": scenario.kv,
        "input_len": scenario.input_len,
        "output_len": scenario.output_len,
        "batch": scenario.batch,
        "engine": current_release().engine,
        "engine_version": "",
        "max_model_len": scenario.max_model_len or AUTO,
        "mnbt": AUTO,
        "max_seqs": AUTO,
        "block": AUTO,
        "overhead_fix": 0.0,
        **LEVERS_OFF,
    }
    return values | page_inputs(ex) | ({LOAD_TEST_PREFIX + "mode": "rate"} if ex.page == "load-test" else {})


def load_scenario(ex: Exercise) -> None:
    """Button callback: the sidebar (and the answering page's inputs) take the exercise's scenario
    before the next run builds them; the inputs that follow the scenario go back to following it."""
    for key in FOLLOWING_KEYS:
        defaults.reset(key)
    for key, value in sidebar_values(ex).items():
        st.session_state[key] = value
    st.session_state[LOADED] = ex.id


@st.cache_data(max_entries=16, show_spinner=False)
def cached_answer(exercise_id: str) -> Answer:
    """The answer for the exercise's scenario on the built-in catalog (the same for every session)."""
    return answer(exercise(exercise_id))


def render_answer(ex: Exercise) -> None:
    try:
        result = cached_answer(ex.id)
    except ValueError as err:
        st.error(t("workshop.answer_error", error=escape_markdown(str(err))))
        return
    for block in markdown_steps(result, lang()):
        st.markdown(block)


def render_exercise(ex: Exercise, root: str, answer_boxes=None, in_class: bool = False, revealed: bool = False) -> None:
    """The question, the load button and the page to work on, the hint, the answer boxes (``answer_boxes()``
    draws them), the answer and the links (starting with ``root``, the app's address ending in "/").

    In a class the answer waits for the teacher: hidden until they reveal it, then shown to everyone."""
    st.header(t("workshop.exercise_heading", number=ex.number, title=t(ex.title)))
    st.caption(t("workshop.source", source=ex.source))
    st.markdown(f"**{t('workshop.scenario_label')}** {scenario_words(ex, lang())}")
    st.markdown(t(ex.question))
    page_file, page_name = PAGE_FILES[ex.page]
    left, right = st.columns(2)
    left.button(
        t("workshop.load"),
        key=f"workshop_load_{ex.id}",
        on_click=load_scenario,
        args=(ex,),
        type="primary",
        icon=":material/upload:",
        help=t("workshop.load_help"),
    )
    right.page_link(page_file, label=t("workshop.open_page", page=t(page_name)), icon=":material/arrow_forward:")
    if st.session_state.pop(LOADED, None) == ex.id:
        st.success(t("workshop.loaded"))
    with st.expander(t("workshop.hint_title"), icon=":material/lightbulb:"):
        st.markdown(t(ex.hint))
    if answer_boxes is not None:
        answer_boxes()
    if in_class and revealed:
        st.info(t("classroom.answer_revealed"), icon=":material/visibility:")
        render_answer(ex)
    elif in_class:
        st.caption(t("classroom.answer_waits"))
    else:
        with st.expander(
            t("workshop.reveal"), key=f"workshop_reveal_{ex.id}", on_change="rerun", icon=":material/visibility:"
        ) as box:
            if box.open:  # derived only when opened
                render_answer(ex)
    links = ex.links(root, lang(), {k: str(v) for k, v in page_inputs(ex).items()})
    st.caption(t("workshop.share_page", page=t(page_name)))
    st.code(links["page"], language=None, wrap_lines=True)
    st.caption(t("workshop.share_workshop"))
    st.code(links["workshop"], language=None, wrap_lines=True)


@functools.lru_cache(maxsize=16)
def _handout(ext: str, lang_code: str, with_answers: bool, root: str, day: str) -> str:
    """A handout, kept per process for the day it is made on (its "made on" line); the addresses it
    is asked for come from requests, so only the 16 most recent are kept."""
    return RENDERERS[ext](lang_code, with_answers, root)


def render_handout(root: str) -> None:
    """The handout's two downloads in the session's language, each built when clicked; its links
    start with ``root`` (none when that is loopback: the handout then says why)."""
    st.subheader(t("workshop.handout_heading"))
    st.caption(t("workshop.handout_caption"))
    with_answers = st.checkbox(t("workshop.handout_answers"), key="workshop_handout_answers")
    lang_code = lang()
    labels = (
        {"md": t("workshop.download_md_answers"), "html": t("workshop.download_html_answers")}
        if with_answers
        else {"md": t("workshop.download_md"), "html": t("workshop.download_html")}
    )
    for col, ext in zip(st.columns(len(RENDERERS)), RENDERERS, strict=True):
        download_button(
            col,
            labels[ext],
            functools.partial(_handout, ext, lang_code, with_answers, root, dt.date.today().isoformat()),
            file_name=file_name(ext, lang_code, with_answers),
            mime=MIME_TYPES[ext],
            key=f"workshop_download_{ext}",
        )
