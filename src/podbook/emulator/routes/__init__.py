"""Every HTTP route of the emulator, grouped by API, and their order.

REST v2/v1 by resource (``pods``, ``podlogs``, ``clusters``, ``catalog``, ``account``,
``templates``, ``volumes``, ``billing``, ``serverless`` with ``workerlogs``); the queue
(``queue``: client operations, ``openai``: the OpenAI-compatible route); the worker protocol
(``worker``: HTTP, ``worker_push``: the push socket); load-balancing endpoints
(``loadbalancer``, ``lbproxy``); ``meta`` (``/healthz``, the queue's OpenAPI document).
Shared plumbing: ``rest`` (authenticated REST routes), ``table`` (a REST module's routes,
declared at their handlers), ``errors`` (the app's exception handlers), ``convertors``,
``jsonresp``. The domain (broker, load balancer, pod runtime, billing) lives in the packages
beside this one and imports no Starlette.
"""

from __future__ import annotations

from starlette.routing import BaseRoute


def build_routes() -> list[BaseRoute]:
    """Every route, in matching order (a flat list: the route table and ``Allow`` read it).

    Queue paths use the ``endpoint`` path convertor, which never matches a REST prefix
    (``pods``, ``clusters``, ...): they may come before the REST routes, so a queue request
    does not try every REST pattern first.
    """
    from podbook.emulator.routes import (
        account,
        billing,
        catalog,
        clusters,
        loadbalancer,
        meta,
        openai,
        podlogs,
        pods,
        queue,
        serverless,
        templates,
        volumes,
        worker,
        worker_push,
    )
    from podbook.emulator.routes.convertors import register_convertors

    register_convertors()
    return [
        *meta.routes(),
        # The hot paths first: a request is matched against the routes in order.
        *queue.routes(),
        *worker_push.routes(),
        *worker.routes(),
        *serverless.table.routes(),
        *openai.routes(),
        *loadbalancer.routes(),
        *pods.table.routes(),
        *podlogs.table.routes(),
        *clusters.table.routes(),
        *catalog.table.routes(),
        *account.table.routes(),
        *templates.table.routes(),
        *volumes.table.routes(),
        *billing.table.routes(),
    ]
