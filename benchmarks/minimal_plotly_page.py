"""The floor under the app's link-open time (benchmarks/browser_timings.py): a Streamlit page with nothing but one
text box and one small Plotly heatmap. Opening it costs what every Streamlit page with a chart costs the browser
(Streamlit's own scripts, then its Plotly chart chunk, loaded when the first chart is drawn), none of the app."""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.text_input("English sentence")
st.plotly_chart(go.Figure(go.Heatmap(z=np.arange(36).reshape(6, 6))))
