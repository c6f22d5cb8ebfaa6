"""Presenters: move data between the backend (worker threads) and the thin tab widgets."""
