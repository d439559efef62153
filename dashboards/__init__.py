"""The Streamlit boards on the published copy of the marts: `streamlit run dashboards/app.py`."""
