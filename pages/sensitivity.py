"""Placeholder page: Sensitivity."""

import streamlit as st

st.title("Sensitivity")
st.info(
    "This page will show the closed-form sensitivity bounds next to the sensitivities "
    "measured on adjacent datasets, and their ratio. It is under construction."
)
