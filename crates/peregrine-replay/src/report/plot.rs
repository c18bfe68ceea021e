//! Plots (placeholder).
