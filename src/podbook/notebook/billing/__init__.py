"""``%billing``: spend over time as a stacked bar chart with a table beside it.

:mod:`.chart` turns a billing answer into chart data (buckets × series), :mod:`.svg` draws
the static SVG and table for saved notebooks, :mod:`.panel` is the live widget
(``views/billing.js``), :mod:`.magic` parses the line and fetches.
"""
