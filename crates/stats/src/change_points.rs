//! Change points in a series: where its level shifts (see `detect`).
