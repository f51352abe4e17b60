"""Great Expectations suites that prove a heavyweight rewrite before it goes live."""
