"""The fuzz corpus's tests share nothing here: the hooks that print its counts at the end of the report are in
tests/conftest.py, which the controlling process loads too when the suite runs on several cores."""
