"""Operations over a whole history: repair, sanitize, trimming, run-start validation, numbering."""
