"""The HTTP side: replies and Status bodies, middlewares, discovery, list options and watch streams, request
pieces, eviction, the connect subresources, protobuf bodies and the debug endpoints. Reads ``storage`` and below;
``rollwise.apiserver.app`` puts it behind aiohttp together with ``auth``."""
