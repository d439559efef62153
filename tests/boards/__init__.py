"""The Streamlit boards: pages, charts, sign-in and a real browser."""
