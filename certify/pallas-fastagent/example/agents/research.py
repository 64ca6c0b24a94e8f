from fast_agent import FastAgent

fast = FastAgent("Research", parse_cli_args=False)


@fast.agent(
    name="research",
    instruction="You research questions with web search and the knowledge graph.",
    servers=["argos", "neo4j"],
)
async def research():
    pass
