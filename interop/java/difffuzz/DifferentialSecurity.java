// The steps of tests/differential_fuzz/gen_security.rs on Kafka's side, called from
// DifferentialController: CreateAcls and DeleteAcls as AclApis hands them to a controller's
// StandardAuthorizer (whose AclMutator is the QuorumController), AlterClientQuotas and
// AlterUserScramCredentials as ControllerApis hands them to the controller.
//
//   REQ 30 ...  -> AclApis.handleCreateAcls: the bindings (a binding Kafka cannot build fails
//                  the whole request), the CLUSTER name and empty name refusals, then
//                  createAcls on the valid ones; answers in request order
//   REQ 31 ...  -> deleteAcls on every filter; DeleteAclsResponse.filterResult each
//   REQ 49 ...  -> alterClientQuotas(entries, validateOnly); fromQuotaEntities
//   REQ 51 ...  -> alterUserScramCredentials
//   REQ 38/39/40 -> create/renew/expireDelegationToken as ControllerApis hands them on (past
//                  its PLAINTEXT and CREATE_TOKENS checks; prepareResponse for creations)
//   a failed future -> the request's own error response (ControllerApis' handleError)
package org.apache.kafka.controller;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.AclCreateResult;
import org.apache.kafka.server.authorizer.AclDeleteResult;

final class DifferentialSecurity {
    private DifferentialSecurity() { }

    /** The answer to a request of this module's APIs, or null for another API. */
    static ApiMessage handle(DifferentialController d, ApiKeys api, short version, ByteBufferAccessor in,
                             ControllerRequestContext ctx) throws Exception {
        switch (api) {
            case CREATE_ACLS: {
                var req = CreateAclsRequest.parse(in, version);
                try {
                    return createAcls(d, ctx, req);
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            case DELETE_ACLS: {
                var req = DeleteAclsRequest.parse(in, version);
                try {
                    List<AclDeleteResult> results = DifferentialController.await(d.controller.deleteAcls(ctx, req.filters()));
                    return new DeleteAclsResponseData().setFilterResults(results.stream()
                        .map(DeleteAclsResponse::filterResult).collect(Collectors.toList()));
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            case ALTER_CLIENT_QUOTAS: {
                var req = AlterClientQuotasRequest.parse(in, version);
                try {
                    var results = DifferentialController.await(
                        d.controller.alterClientQuotas(ctx, req.entries(), req.validateOnly()));
                    return AlterClientQuotasResponse.fromQuotaEntities(results, 0).data();
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            case ALTER_USER_SCRAM_CREDENTIALS: {
                var req = AlterUserScramCredentialsRequest.parse(in, version);
                try {
                    return DifferentialController.await(d.controller.alterUserScramCredentials(ctx, req.data()));
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            case CREATE_DELEGATION_TOKEN: {
                // ControllerApis.handleCreateDelegationTokenRequest past allowTokenRequests and
                // the CREATE_TOKENS check (the requester may do anything here).
                var req = org.apache.kafka.common.requests.CreateDelegationTokenRequest.parse(in, version);
                try {
                    var data = req.data();
                    if (data.ownerPrincipalName() != null && !data.ownerPrincipalName().isEmpty()) {
                        new org.apache.kafka.common.security.auth.KafkaPrincipal(
                            data.ownerPrincipalType(), data.ownerPrincipalName());
                    }
                    var r = DifferentialController.await(d.controller.createDelegationToken(ctx, data));
                    return org.apache.kafka.common.requests.CreateDelegationTokenResponse.prepareResponse(
                        version, 0, org.apache.kafka.common.protocol.Errors.forCode(r.errorCode()),
                        new org.apache.kafka.common.security.auth.KafkaPrincipal(r.principalType(), r.principalName()),
                        new org.apache.kafka.common.security.auth.KafkaPrincipal(
                            r.tokenRequesterPrincipalType(), r.tokenRequesterPrincipalName()),
                        r.issueTimestampMs(), r.expiryTimestampMs(), r.maxTimestampMs(), r.tokenId(),
                        java.nio.ByteBuffer.wrap(r.hmac())).data();
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            case RENEW_DELEGATION_TOKEN: {
                var req = org.apache.kafka.common.requests.RenewDelegationTokenRequest.parse(in, version);
                try {
                    return DifferentialController.await(d.controller.renewDelegationToken(ctx, req.data()));
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            case EXPIRE_DELEGATION_TOKEN: {
                var req = org.apache.kafka.common.requests.ExpireDelegationTokenRequest.parse(in, version);
                try {
                    return DifferentialController.await(d.controller.expireDelegationToken(ctx, req.data()));
                } catch (Exception e) {
                    return req.getErrorResponse(0, DifferentialController.cause(e)).data();
                }
            }
            default:
                return null;
        }
    }

    /** AclApis.handleCreateAcls with an authorizer whose AclMutator is the controller. */
    static ApiMessage createAcls(DifferentialController d, ControllerRequestContext ctx, CreateAclsRequest req)
            throws Exception {
        List<AclBinding> all = req.aclCreations().stream().map(CreateAclsRequest::aclBinding)
            .collect(Collectors.toList());
        Map<AclBinding, ApiError> refused = new HashMap<>();
        List<AclBinding> valid = new ArrayList<>();
        for (AclBinding acl : all) {
            var pattern = acl.pattern();
            if (pattern.resourceType() == ResourceType.CLUSTER && !pattern.name().equals("kafka-cluster")) {
                refused.put(acl, ApiError.fromThrowable(new org.apache.kafka.common.errors.InvalidRequestException(
                    "The only valid name for the CLUSTER resource is kafka-cluster")));
            } else if (pattern.name().isEmpty()) {
                refused.put(acl, ApiError.fromThrowable(new org.apache.kafka.common.errors.InvalidRequestException(
                    "Invalid empty resource name")));
            } else {
                valid.add(acl);
            }
        }
        List<AclCreateResult> created = DifferentialController.await(d.controller.createAcls(ctx, valid));
        List<CreateAclsResponseData.AclCreationResult> results = new ArrayList<>();
        for (AclBinding acl : all) {
            CreateAclsResponseData.AclCreationResult r = new CreateAclsResponseData.AclCreationResult();
            ApiError error = refused.get(acl);
            if (error == null) {
                error = created.get(valid.indexOf(acl)).exception().map(ApiError::fromThrowable).orElse(null);
            }
            if (error != null) r.setErrorCode(error.error().code()).setErrorMessage(error.message());
            results.add(r);
        }
        return new CreateAclsResponseData().setResults(results);
    }
}
