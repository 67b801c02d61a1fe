//! Ferry's recovery log (work in progress).
