"""Placeholder page: Gaussian DP."""

import streamlit as st

st.title("Gaussian DP")
st.info(
    "This page will show the Riemannian Gaussian mechanism, the µ of Gaussian differential "
    "privacy it achieves, and how it compares with the Laplace mechanism at equal privacy. "
    "It is under construction."
)
