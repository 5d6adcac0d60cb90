"""Streamlit's own navigation (st.navigation) over the app's registry of views and lessons, for
test_navigation.py: the explorer's views and the ten lessons as st.Page entries in sections, in the position and
language the link asks for (?position=top|sidebar&expanded=0|1&lang=en|zh), beside the first widgets of the app's
sidebar. Each page draws only its title: what is measured is where the navigation puts things at 1024×768."""

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ui import views as registry  # noqa: E402
from words import language_name, t  # noqa: E402

lang = st.query_params.get("lang", "en")
position = st.query_params.get("position", "top")
expanded = st.query_params.get("expanded", "1") == "1"
st.set_page_config(layout="wide")


def page(key: str):
    def draw() -> None:
        st.markdown(f"#### {t(key, lang)}")

    draw.__name__ = key  # st.Page names a callable's page after the function
    return st.Page(draw, title=t(key, lang), url_path=key)


sections = {t(group, lang): [page(k) for k in keys] for group, keys in registry.view_groups().items()}
sections[t("page_lessons", lang)] = [page(k) for k in registry.lessons()]
chosen = st.navigation(sections, position=position, expanded=expanded)
with st.sidebar:  # the app's sidebar starts so: the sentence box is its fourth widget
    st.radio(t("interface_language", lang), ["English", "中文"], horizontal=True)
    st.selectbox(t("checkpoint", lang), ["en-zh"])
    st.selectbox(t("examples", lang), [t("example_placeholder", lang)])
    st.text_input(t("sentence", lang, language=language_name("en", lang)), key="sentence")
chosen.run()
