"""Figure builders: plain arrays and token lists in, Plotly figures out. No Streamlit, no model calls."""
