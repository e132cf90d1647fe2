"""Instrumentation of the engines: fault points that kill a writer for crash-safety tests, the seconds each
write step takes, and a progress bar for Spark jobs. Every other package may use it; it uses none of them."""
