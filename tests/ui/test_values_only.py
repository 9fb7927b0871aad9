"""``ui.session.ValuesOnly``: the stand-in for ``st`` in a page's opening run returns each
widget's value from the session state and draws nothing."""

from streamlit.testing.v1 import AppTest


def _script():
    import streamlit as st

    from ui.session import ValuesOnly

    st.session_state.setdefault("n", 35)
    st.session_state.setdefault("eps", 2.0)
    st.session_state.setdefault("mode", "strict")
    ui = ValuesOnly() if st.session_state.get("quiet", True) else st
    with ui.container(border=True):
        ui.subheader("Settings")
        c1, c2 = ui.columns(2)
        n = c1.slider("n", 10, 100, key="n")
        eps = c2.select_slider("ε", [0.5, 1.0, 2.0], key="eps")
        mode = ui.radio("Mode", ["strict", "paper"], key="mode")
        ui.caption("a caption")
        pressed = ui.button("Go", key="go")
    st.session_state["seen"] = (n, eps, mode, pressed)
    st.write("done")


def test_widgets_read_the_session_and_draw_nothing():
    at = AppTest.from_function(_script).run()
    assert not at.exception
    assert at.session_state["seen"] == (35, 2.0, "strict", False)
    assert not at.slider and not at.select_slider and not at.radio and not at.button
    assert not at.subheader and not at.caption
    assert [m.value for m in at.markdown] == ["done"]


def test_the_same_script_drawn_gives_the_same_values():
    at = AppTest.from_function(_script)
    at.session_state["quiet"] = False
    at.run()
    assert not at.exception
    assert at.session_state["seen"] == (35, 2.0, "strict", False)
    assert at.slider(key="n").value == 35 and at.radio(key="mode").value == "strict"


def test_a_widget_without_a_key_is_refused():
    from streamlit import config

    def script():
        from ui.session import ValuesOnly

        ValuesOnly().number_input("x", 0, 10)

    # The app's config redacts error messages in the browser (client.showErrorDetails =
    # "none", which AppTest reads too); this test reads the message.
    before = config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", "full")
    try:
        at = AppTest.from_function(script).run()
    finally:
        config.set_option("client.showErrorDetails", before)
    assert at.exception and "needs the widget's key" in at.exception[0].message
