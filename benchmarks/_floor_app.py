"""The floor of the browser benchmark: a Streamlit page with a title and one small plotly chart.

No widgets, no data, no computation: what any Streamlit page that draws a plotly chart costs on
this machine before its own content (``bench_browser`` measures it in the same run as the
dashboard's pages). Started with ``streamlit run`` on a server of its own.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="Floor", layout="wide")
st.title("Floor: one chart")
t = np.linspace(0.0, 10.0, 200)
fig = go.Figure(go.Scatter(x=t, y=np.sin(t), mode="lines", name="sin"))
fig.update_layout(title="A line", template="plotly_white", height=460,
                  xaxis_title="t", yaxis_title="sin t")
st.plotly_chart(fig)
