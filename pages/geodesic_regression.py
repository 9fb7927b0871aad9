"""Placeholder page: Geodesic regression."""

import streamlit as st

st.title("Geodesic regression")
st.info(
    "This page will fit a geodesic regression on the sphere, SPD(2) or Kendall shape space "
    "and compare the true geodesic with a private one released under budgets ε_p and ε_v. "
    "It is under construction."
)
