"""Placeholder page: Fréchet mean."""

import streamlit as st

st.title("Fréchet mean")
st.info(
    "This page will compare the true Fréchet mean of data on the sphere or on SPD matrices "
    "with a private mean released under a budget ε. It is under construction."
)
