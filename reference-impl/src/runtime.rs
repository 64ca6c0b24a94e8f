//! Startup, `depends_on` ordering, live reload and shutdown of a whole Pallas.
