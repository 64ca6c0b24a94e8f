//! Configuration files: `agents.yaml`, `fastagent.config.yaml`, secrets, `.env`, agent cards.
