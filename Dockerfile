# The operator image: `rollwise run` on python:3.11-slim, as a non-root user with a read-only root filesystem.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
COPY --from=build /install /usr/local
# 65532 is the conventional "nonroot" uid; the Deployment's securityContext asks for the same.
USER 65532:65532
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
EXPOSE 8080 8081
ENTRYPOINT ["rollwise"]
CMD ["run", "--in-cluster", "--leader-elect"]
