"""Placeholder page: Linear regression."""

import streamlit as st

st.title("Linear regression")
st.info(
    "This page will compare private geodesic regression in Euclidean space with standard "
    "private linear regression on the same data. It is under construction."
)
