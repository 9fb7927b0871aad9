"""Placeholder page: Budget split."""

import streamlit as st

st.title("Budget split")
st.info(
    "This page will show how splitting a total privacy budget between the footpoint (ε_p) "
    "and the direction (ε_v) of a private geodesic changes its error, for several sample "
    "sizes. It is under construction."
)
