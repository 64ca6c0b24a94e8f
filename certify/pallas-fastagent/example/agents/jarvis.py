from fast_agent import FastAgent
from fast_agent.types import RequestParams

fast = FastAgent("Jarvis", parse_cli_args=False)


@fast.agent(
    name="jarvis",
    instruction="You are Jarvis, a helpful assistant. Delegate research to the research agent.",
    servers=["argos", "mnemosyne", "research"],
    request_params=RequestParams(temperature=0.6, top_p=0.9),
)
async def jarvis():
    pass
