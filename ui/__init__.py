"""Streamlit-side helpers of the app: widget state and link parsing. Figures live in viz/, computation in model/."""
